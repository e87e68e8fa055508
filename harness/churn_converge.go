package harness

import (
	"cmp"
	"context"
	"fmt"
	"github.com/nqos/nqos/harness/verdict"
	"maps"
	"slices"
	"time"

	"github.com/nqos/nqos/internal/qos"
)

// converge polls until the NB rows equal the compiler's intent for the
// world (with the VMs' real port names) and every applied NetworkQoS's
// Accepted condition is the compiler's, written for its current
// generation; it returns how long that took, or the last verdict.Mismatches
// after the step's converge timeout (when names the moment).
func (ch *churner) converge(ctx context.Context, when string) (time.Duration, verdict.Mismatches, error) {
	start := time.Now()
	deadline := time.NewTimer(ch.c.Converge)
	defer deadline.Stop()
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		mism, err := ch.converged(ctx)
		if err != nil {
			return 0, nil, err
		}
		if len(mism) == 0 {
			return time.Since(start), nil, nil
		}
		select {
		case <-ctx.Done():
			return 0, nil, fmt.Errorf("churn: waiting for convergence %s: %w (last: %s)", when, ctx.Err(), mism)
		case <-deadline.C:
			for i := range mism {
				mism[i].Text = fmt.Sprintf("not converged within %s %s: %s", ch.c.Converge, when, mism[i].Text)
			}
			return time.Since(start), mism, nil
		case <-tick.C:
		}
	}
}

// converged compares the whole NetworkQoS-owned NB state and every
// applied object's Accepted condition with the compiler's.
func (ch *churner) converged(ctx context.Context) (verdict.Mismatches, error) {
	ex := ch.ex
	want, err := ex.realIntent()
	if err != nil {
		return nil, err
	}
	rows, err := ex.env.Rows(ctx)
	if err != nil {
		return nil, fmt.Errorf("read the NB rows: %w", err)
	}
	var mism verdict.Mismatches
	if missing, extra := diffRows(want, rows); len(missing)+len(extra) > 0 {
		mism.Add(verdict.Rows, fmt.Sprintf("NB differs from the compiler's intent: %d rows missing %v, %d extra %v", len(missing), missing, len(extra), extra))
	}
	for _, o := range want.NetworkQoS {
		k := ObjectKey{Namespace: o.Namespace, Name: o.Name}
		wantC := acceptedOf(want, k)
		st, err := ch.adv.AcceptedStatus(ctx, k.Namespace, k.Name)
		if err != nil {
			return nil, fmt.Errorf("status of NetworkQoS %s/%s: %w", k.Namespace, k.Name, err)
		}
		switch {
		case wantC == nil:
		case !st.Found || st.Accepted == nil:
			mism.Add(verdict.Conditions, fmt.Sprintf("NetworkQoS %s/%s has no Accepted condition, want %s/%s", k.Namespace, k.Name, wantC.Status, wantC.Reason))
		case st.Observed != st.Generation || st.Accepted.Status != wantC.Status || st.Accepted.Reason != wantC.Reason:
			mism.Add(verdict.Conditions, fmt.Sprintf("NetworkQoS %s/%s Accepted %s/%s for generation %d (object at %d), want %s/%s",
				k.Namespace, k.Name, st.Accepted.Status, st.Accepted.Reason, st.Observed, st.Generation, wantC.Status, wantC.Reason))
		}
	}
	return mism, nil
}

// realIntent is the compiler's rows for the world, with each VM's port named
// as the environment names it.
func (ex *execution) realIntent() (qos.Desired, error) {
	want, err := ex.world.Compile()
	if err != nil {
		return want, err
	}
	rename := map[string]string{}
	for i := range ex.sc.Topology.VMs {
		vm := &ex.sc.Topology.VMs[i]
		if ex.world.Absent(vm.Name) {
			continue
		}
		real, err := ex.env.PortName(vm)
		if err != nil {
			return want, fmt.Errorf("port of VM %s: %w", vm.Name, err)
		}
		rename[ex.world.Port(vm)] = real
	}
	for i, pg := range want.PortGroups {
		ports := make([]string, len(pg.Ports))
		for j, p := range pg.Ports {
			ports[j] = cmp.Or(rename[p], p)
		}
		slices.Sort(ports)
		want.PortGroups[i].Ports = ports
	}
	return want, nil
}

// diffRows compares the port groups, address sets and QoS rows of want
// and got as multisets of canonical JSON lines.
func diffRows(want, got qos.Desired) (missing, extra []string) {
	w, g := want.RowLines(), got.RowLines()
	for _, line := range slices.Sorted(maps.Keys(w)) {
		for range w[line] - g[line] {
			missing = append(missing, line)
		}
	}
	for _, line := range slices.Sorted(maps.Keys(g)) {
		for range g[line] - w[line] {
			extra = append(extra, line)
		}
	}
	return missing, extra
}
