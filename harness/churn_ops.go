package harness

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/nqos/nqos/harness/lifeprobe"
	"github.com/nqos/nqos/harness/verdict"
	"github.com/nqos/nqos/internal/qos"
	"github.com/nqos/nqos/scenarios"
)

// split lists the applied objects the compiler accepts and rejects in
// their current revision, and those not applied, sorted by id.
func (ch *churner) split() (accepted, rejected, absent []string) {
	want, err := ch.ex.world.Compile()
	for i, m := range ch.c.Base {
		cur, ok := ch.cur[m.ID]
		switch {
		case !ok:
			absent = append(absent, ch.c.Objects[i])
		case err == nil && isRejected(want, cur):
			rejected = append(rejected, m.ID)
		default:
			accepted = append(accepted, m.ID)
		}
	}
	slices.Sort(accepted)
	slices.Sort(rejected)
	slices.Sort(absent)
	return accepted, rejected, absent
}

func isRejected(want qos.Desired, m *scenarios.Manifest) bool {
	c := acceptedOf(want, keyOf(m))
	return c != nil && c.Status == "False"
}

func acceptedOf(d qos.Desired, k ObjectKey) *qos.Condition {
	for _, o := range d.NetworkQoS {
		if o.Namespace != k.Namespace || o.Name != k.Name {
			continue
		}
		for i := range o.Conditions {
			if o.Conditions[i].Type == qos.ConditionAccepted {
				return &o.Conditions[i]
			}
		}
	}
	return nil
}

// pick chooses an operation the current population allows; rejections
// never outnumber acceptances, so accepted objects (and their rows) stay
// part of the population.
func (ch *churner) pick() string {
	accepted, rejected, absent := ch.split()
	var kinds []string
	add := func(ok bool, k string) {
		if ok {
			kinds = append(kinds, k)
		}
	}
	add(true, opRelabel)
	running, stopped := ch.lateSplit()
	add(len(stopped) > 0, opVMCreate)
	add(len(running) > 0, opVMDelete)
	add(len(absent) > 0, opCreate)
	add(len(accepted) > 0, opEdit)
	add(len(accepted) > len(rejected)+1, opReject)
	add(len(rejected) > 0, opAccept)
	add(len(accepted)+len(rejected) > 1, opDelete)
	return kinds[ch.rng.IntN(len(kinds))]
}

func (ch *churner) choose(ids []string) string { return ids[ch.rng.IntN(len(ids))] }

func (ch *churner) do(ctx context.Context, kind string) error {
	accepted, rejected, absent := ch.split()
	switch kind {
	case opRelabel:
		return ch.relabel(ctx, ch.choose(ch.relabelable()), ch.choose(ch.c.Values))
	case opVMCreate:
		_, stopped := ch.lateSplit()
		return ch.startLate(ctx, ch.choose(stopped))
	case opVMDelete:
		running, _ := ch.lateSplit()
		return ch.stopLate(ctx, ch.choose(running))
	case opCreate:
		return ch.write(ctx, ch.choose(absent), false)
	case opEdit:
		return ch.write(ctx, ch.choose(accepted), false)
	case opReject:
		return ch.write(ctx, ch.choose(accepted), true)
	case opAccept:
		return ch.write(ctx, ch.choose(rejected), false)
	case opDelete:
		return ch.remove(ctx, ch.choose(append(accepted, rejected...)))
	}
	return fmt.Errorf("unknown churn operation %q", kind)
}

func (ch *churner) relabel(ctx context.Context, name, value string) error {
	if err := ch.ex.setLabels(ctx, ch.ex.sc.VM(name), map[string]string{ch.c.Label: value}, nil); err != nil {
		return fmt.Errorf("label VM %s %s=%s: %w", name, ch.c.Label, value, err)
	}
	return nil
}

func (ch *churner) base(id string) *scenarios.Manifest {
	return ch.c.Base[slices.Index(ch.c.Objects, id)]
}

// write applies a new revision of id: the base with a random priority
// and podSelector label value, and with rejected the reject patch on top.
func (ch *churner) write(ctx context.Context, id string, rejected bool) error {
	m, err := ch.base(id).Patched(scenarios.ChurnEdit(ch.c.Label, ch.choose(ch.c.Values), 1+ch.rng.IntN(99)))
	if err == nil && rejected {
		m, err = m.Patched(ch.c.RejectPatch)
	}
	if err != nil {
		return fmt.Errorf("revision of %s: %w", id, err)
	}
	ch.rev++
	m.Revision = ch.base(id).Revision + ch.rev
	return ch.apply(ctx, m)
}

// apply writes a revision and, when the compiler rejects it, records its
// generation as awaiting its Accepted=False status.
func (ch *churner) apply(ctx context.Context, m *scenarios.Manifest) error {
	k := keyOf(m)
	ch.forget(k)
	written := time.Now()
	if err := ch.ex.env.Apply(ctx, m); err != nil {
		return fmt.Errorf("apply %s (revision %d): %w", m.Key(), m.Revision, err)
	}
	ch.cur[m.ID] = m
	ch.ex.world.Apply(m)
	// the compiler is the oracle the NB is judged against
	if want, err := ch.ex.world.Compile(); err != nil || !isRejected(want, m) {
		return nil
	}
	st, err := ch.adv.AcceptedStatus(ctx, m.Namespace, m.Name)
	if err != nil {
		return fmt.Errorf("generation of %s: %w", m.Key(), err)
	}
	ch.mu.Lock()
	defer ch.mu.Unlock()
	ch.pending[k] = st.Generation
	ch.res.written[k] = written
	return nil
}

func (ch *churner) remove(ctx context.Context, id string) error {
	m := ch.cur[id]
	ch.forget(keyOf(m))
	if err := ch.ex.env.Delete(ctx, m); err != nil {
		return fmt.Errorf("delete %s: %w", m.Key(), err)
	}
	delete(ch.cur, id)
	ch.ex.world.Remove(m)
	return nil
}

// forget stops counting k as rejected, before it is changed.
func (ch *churner) forget(k ObjectKey) {
	ch.mu.Lock()
	defer ch.mu.Unlock()
	delete(ch.pending, k)
	delete(ch.rejected, k)
}

// confirmLoop moves pending rejected revisions to the rejected set once
// their Accepted=False status for that generation is visible.
func (ch *churner) confirmLoop(ctx context.Context) error {
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-tick.C:
		}
		ch.mu.Lock()
		keys := slices.SortedFunc(maps.Keys(ch.pending), compareKeys)
		ch.mu.Unlock()
		for _, k := range keys {
			if err := ch.confirm(ctx, k); err != nil && ctx.Err() == nil {
				return err
			}
		}
	}
}

func compareKeys(a, b ObjectKey) int {
	return cmp.Or(cmp.Compare(a.Namespace, b.Namespace), cmp.Compare(a.Name, b.Name))
}

func (ch *churner) confirm(ctx context.Context, k ObjectKey) error {
	ch.mu.Lock()
	gen, ok := ch.pending[k]
	ch.mu.Unlock()
	if !ok {
		return nil
	}
	st, err := ch.adv.AcceptedStatus(ctx, k.Namespace, k.Name)
	if err != nil || !st.Found || st.Accepted == nil || st.Generation != gen || st.Observed != gen || st.Accepted.Status != "False" {
		return err
	}
	ch.mu.Lock()
	defer ch.mu.Unlock()
	if cur, still := ch.pending[k]; !still || cur != gen {
		return nil // changed meanwhile: this observation is stale
	}
	delete(ch.pending, k)
	ch.rejected[k] = true
	ch.res.rejections++
	ch.res.confirmMax = max(ch.res.confirmMax, time.Since(ch.res.written[k]))
	return nil
}

// restore puts every churned object and VM label back as it was before
// the step and stops every late VM the churn left running, so the steps
// after it see the state the validator knows.
func (ch *churner) restore(ctx context.Context) error {
	for i, base := range ch.c.Base {
		var err error
		cur, applied := ch.cur[base.ID]
		switch {
		case ch.c.Applied[i] && cur != base:
			err = ch.apply(ctx, base)
		case !ch.c.Applied[i] && applied:
			err = ch.remove(ctx, base.ID)
		}
		if err != nil {
			return err
		}
	}
	for _, name := range ch.c.VMs {
		var err error
		if v := ch.before[name]; v != nil {
			err = ch.relabel(ctx, name, *v)
		} else {
			err = ch.ex.setLabels(ctx, ch.ex.sc.VM(name), nil, []string{ch.c.Label})
		}
		if err != nil {
			return err
		}
	}
	running, _ := ch.lateSplit()
	for _, name := range running {
		if err := ch.stopLate(ctx, name); err != nil {
			return err
		}
	}
	return nil
}

// converge polls until the NB rows equal the compiler's intent for the
// world (with the VMs' real port names) and every applied NetworkQoS's
// Accepted condition is the compiler's, written for its current
// generation; it returns how long that took, or the last verdict.Mismatches
// after the step's converge timeout (when names the moment).
func (ch *churner) converge(ctx context.Context, when string) (time.Duration, verdict.Mismatches, error) {
	start := time.Now()
	var mism verdict.Mismatches
	err := poll(ctx, 100*time.Millisecond, ch.c.Converge, func() (done bool, err error) {
		mism, err = ch.converged(ctx)
		return len(mism) == 0, err
	}, func(ctxErr error) error {
		if ctxErr != nil {
			return fmt.Errorf("churn: waiting for convergence %s: %w (last: %s)", when, ctxErr, mism)
		}
		for i := range mism {
			mism[i].Text = fmt.Sprintf("not converged within %s %s: %s", ch.c.Converge, when, mism[i].Text)
		}
		return nil
	})
	if err != nil {
		return 0, nil, err
	}
	return time.Since(start), mism, nil
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
	if d := lifeprobe.DiffRows(want, rows); !d.Empty() {
		mism.Add(verdict.Rows, fmt.Sprintf("NB differs from the compiler's intent: %d rows missing %v, %d extra %v", len(d.Missing), d.Missing, len(d.Extra), d.Extra))
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
