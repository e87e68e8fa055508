package localnetenv

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/nqos/nqos/harness"
)

// convergence is how the NB reached the compiler's rows for the
// cluster's objects after a controller step, or how it failed to.
type convergence struct {
	at  time.Time // when the rows were first equal (zero: never)
	res ConvergeResult
}

// converge polls until the NB rows equal qos.Compile of the cluster's
// objects and the NB audit is clean. Not converging within
// convergeTimeout is a judged result (the difference), not an error.
func (e *Env) converge(ctx context.Context) (convergence, error) {
	cl := &Cluster{Kube: e.kube, Dynamic: e.dyn}
	res, err := WaitConverged(ctx, cl, e.nb, convergeTimeout)
	c := convergence{res: res}
	switch {
	case err == nil:
		c.at = time.Now()
	case ctx.Err() == nil && errors.Is(err, context.DeadlineExceeded):
	default:
		return c, fmt.Errorf("NB rows against the compiler's: %w", err)
	}
	return c, nil
}

// after is the time from the restarted process's synced line to
// convergence (0 if it never converged).
func (c convergence) after(rr ControllerRestartResult) time.Duration {
	if c.at.IsZero() {
		return 0
	}
	return max(c.at.Sub(rr.StopAt.Add(rr.Down+rr.Sync)), 0)
}

// result carries the difference and the audit's findings.
func (c convergence) result() harness.ControllerResult {
	var out harness.ControllerResult
	if c.at.IsZero() {
		out.Missing, out.Extra = c.res.Diff.Missing, c.res.Diff.Extra
		for _, v := range c.res.Violations {
			out.Problems = append(out.Problems, v.Row+": "+v.Problem)
		}
	}
	return out
}
