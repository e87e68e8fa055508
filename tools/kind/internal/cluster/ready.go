package cluster

import (
	"context"
	"fmt"
	"strings"
	"time"

	"sigs.k8s.io/kind/pkg/cluster"
)

// pollInterval is how often poll re-checks its condition.
const pollInterval = 500 * time.Millisecond

// poll calls check until it reports done, returns an error, or ctx ends;
// then the error names what was awaited and the last state check saw.
func poll(ctx context.Context, what string, check func() (done bool, state string, err error)) error {
	t := time.NewTicker(pollInterval)
	defer t.Stop()
	for {
		done, state, err := check()
		if err != nil {
			return fmt.Errorf("wait for %s: %w", what, err)
		}
		if done {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("wait for %s (last: %s): %w", what, state, ctx.Err())
		case <-t.C:
		}
	}
}

// waitReady waits until want nodes of the cluster report Ready=True.
func waitReady(ctx context.Context, p *cluster.Provider, name string, want int) error {
	cp, err := controlPlane(p, name)
	if err != nil {
		return err
	}
	return poll(ctx, fmt.Sprintf("%d Ready nodes in cluster %s", want, name), func() (bool, string, error) {
		out, err := kubectl(ctx, cp, "get", "nodes", "-o",
			`jsonpath={range .items[*]}{.metadata.name}={.status.conditions[?(@.type=="Ready")].status} {end}`)
		if err != nil {
			return false, err.Error(), nil
		}
		ready := 0
		for _, f := range strings.Fields(out) {
			if strings.HasSuffix(f, "=True") {
				ready++
			}
		}
		return ready == want, strings.TrimSpace(out), nil
	})
}
