package localnetenv

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/nqos/nqos/harness"
	"github.com/nqos/nqos/harness/lifeprobe"
)

// convergence is how the NB reached the compiler's rows for the
// cluster's objects after a controller step, or how it failed to.
type convergence struct {
	at  time.Time // when the rows were first equal (zero: never)
	res convergeResult
}

// converge polls until every zone's NB rows equal qos.Compile of the
// cluster's objects for that zone (central: every node; interconnect:
// the zone's node, as its controller compiles) and every zone's NB audit
// is clean. Not converging within convergeTimeout is a judged result
// (the first differing zone's difference), not an error.
func (e *testbedEnv) converge(ctx context.Context) (convergence, error) {
	deadline := time.Now().Add(convergeTimeout)
	var c convergence
	for _, z := range e.zones {
		res, err := e.waitConverged(ctx, z, max(time.Until(deadline), time.Millisecond))
		c.res = res
		switch {
		case err == nil:
		case ctx.Err() == nil && errors.Is(err, context.DeadlineExceeded):
			return c, nil
		default:
			return c, fmt.Errorf("zone %s: NB rows against the compiler's: %w", z.zone.Name, err)
		}
	}
	c.at = time.Now()
	return c, nil
}

// after is the time from the restarted process's synced line to
// convergence (0 if it never converged).
func (c convergence) after(rr lifeprobe.ControllerRestart) time.Duration {
	if c.at.IsZero() {
		return 0
	}
	return max(c.at.Sub(rr.Ready()), 0)
}

// divergence is the difference and the audit's findings of a
// convergence that never came.
func (c convergence) divergence() harness.Divergence {
	var out harness.Divergence
	if c.at.IsZero() {
		out.Missing, out.Extra = c.res.Diff.Missing, c.res.Diff.Extra
		for _, v := range c.res.Violations {
			out.Problems = append(out.Problems, v.Row+": "+v.Problem)
		}
	}
	return out
}
