package harness

import (
	"context"
	"fmt"
	"github.com/nqos/nqos/harness/verdict"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/nqos/nqos/harness/results"
	"github.com/nqos/nqos/internal/qos"
	"github.com/nqos/nqos/scenarios"
)

// wait polls the check until it holds; after the timeout it fails with
// the last mismatches. Reads use the parent context, so the timeout never
// turns into an environment error.
func (ex *execution) wait(ctx context.Context, step int, c *scenarios.Check) error {
	interval := ex.r.PollInterval
	if interval <= 0 {
		interval = 100 * time.Millisecond
	}
	var mism verdict.Mismatches
	return poll(ctx, interval, c.Timeout, func() (done bool, err error) {
		mism, err = ex.evaluate(ctx, step, c)
		return len(mism) == 0, err
	}, func(ctxErr error) error {
		if ctxErr != nil {
			return fmt.Errorf("wait interrupted: %w (last: %s)", ctxErr, mism)
		}
		return mism.Failure(fmt.Sprintf("not met within %s: ", c.Timeout))
	})
}

// poll calls check at once and then every interval until it is done or
// fails (its error); when ctx ends first it returns late(ctx.Err()), when
// timeout passes first late(nil).
func poll(ctx context.Context, interval, timeout time.Duration, check func() (done bool, err error), late func(ctxErr error) error) error {
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	tick := time.NewTicker(interval)
	defer tick.Stop()
	for {
		if done, err := check(); done || err != nil {
			return err
		}
		select {
		case <-ctx.Done():
			return late(ctx.Err())
		case <-deadline.C:
			return late(nil)
		case <-tick.C:
		}
	}
}

// evaluate returns the verdict.Mismatches of a check (none: it holds); an error
// means the environment could not be read.
func (ex *execution) evaluate(ctx context.Context, step int, c *scenarios.Check) (verdict.Mismatches, error) {
	zones, err := ex.zoneRows(ctx)
	if err != nil {
		return nil, fmt.Errorf("read the NB rows: %w", err)
	}
	var mism verdict.Mismatches
	for _, z := range zones {
		rows, at := z.Rows, z.prefix(len(zones))
		if c.NoOwnedRows {
			if n := len(rows.QoS) + len(rows.PortGroups) + len(rows.AddressSets); n > 0 {
				mism.Add(verdict.Rows, fmt.Sprintf("%s%d NetworkQoS-owned rows left (%d QoS, %d port groups, %d address sets)",
					at, n, len(rows.QoS), len(rows.PortGroups), len(rows.AddressSets)))
			}
		}
		for i := range c.Objects {
			if oc := &c.Objects[i]; oc.Rows != nil {
				m, err := ex.rows(z, oc)
				if err != nil {
					return nil, err
				}
				for _, s := range m {
					mism.Add(verdict.Rows, at+s)
				}
			}
		}
	}
	for i := range c.Objects {
		if oc := &c.Objects[i]; oc.Condition != nil {
			m, err := ex.condition(ctx, step, oc)
			if err != nil {
				return nil, err
			}
			mism.Add(verdict.Conditions, m...)
		}
		if oc := &c.Objects[i]; oc.Aggregate != nil {
			m, err := ex.aggregate(ctx, oc)
			if err != nil {
				return nil, err
			}
			mism.Add(verdict.Conditions, m...)
		}
	}
	m, err := ex.startFails(ctx, c)
	if err != nil {
		return nil, err
	}
	return append(mism, m...), nil
}

func (ex *execution) condition(ctx context.Context, step int, oc *scenarios.ObjectCheck) ([]string, error) {
	m, want := oc.Object, oc.Condition
	conds, err := ex.env.Conditions(ctx, m.Namespace, m.Name)
	if err != nil {
		return nil, fmt.Errorf("read conditions of %s: %w", m.Key(), err)
	}
	ex.record(step, m, conds)
	i := slices.IndexFunc(conds, func(c qos.Condition) bool { return c.Type == want.Type })
	if i < 0 {
		return []string{fmt.Sprintf("%s has no %s condition", m.Key(), want.Type)}, nil
	}
	return conditionMismatches(m.Key(), conds[i], want), nil
}

func conditionMismatches(key string, got qos.Condition, want *scenarios.ConditionCheck) []string {
	var out []string
	if got.Status != want.Status || (want.Reason != "" && got.Reason != want.Reason) {
		out = append(out, fmt.Sprintf("%s %s is %s/%s, want %s/%s", key, want.Type, got.Status, got.Reason, want.Status, want.Reason))
	}
	for _, s := range want.MessageContains {
		if !strings.Contains(got.Message, s) {
			out = append(out, fmt.Sprintf("%s %s message %q does not contain %q", key, want.Type, got.Message, s))
		}
	}
	return out
}

// record adds conditions not seen before to the report.
func (ex *execution) record(step int, m *scenarios.Manifest, conds []qos.Condition) {
	if ex.seen == nil {
		ex.seen = map[string]bool{}
	}
	for _, c := range conds {
		k := fmt.Sprintf("%s|%s|%s|%s|%s", m.Key(), c.Type, c.Status, c.Reason, c.Message)
		if !ex.seen[k] {
			ex.seen[k] = true
			ex.res.Conditions = append(ex.res.Conditions, results.Condition{Step: step, Object: m.Key(), Cond: c})
		}
	}
}

// owned selects the rows one NetworkQoS owns.
func owned(all qos.Desired, m *scenarios.Manifest) qos.Desired {
	mine := func(ids map[string]string) bool {
		return ids[qos.OwnerTypeKey] == qos.OwnerType && ids[qos.ObjectNameKey] == m.Namespace+":"+m.Name
	}
	return all.Keep(mine)
}

func (ex *execution) rows(z ZoneRows, oc *scenarios.ObjectCheck) ([]string, error) {
	m, want := oc.Object, oc.Rows
	got := owned(z.Rows, m)
	var out []string // prefixed with the object's key at the end
	if want.None {
		if n := len(got.QoS) + len(got.PortGroups) + len(got.AddressSets); n > 0 {
			out = append(out, fmt.Sprintf("owns %d rows (%d QoS, %d port groups, %d address sets), want none", n, len(got.QoS), len(got.PortGroups), len(got.AddressSets)))
		}
	} else {
		if want.AddressSets != nil && len(got.AddressSets) != *want.AddressSets {
			out = append(out, fmt.Sprintf("owns %d address sets, want %d", len(got.AddressSets), *want.AddressSets))
		}
		if want.PortGroupMembers != nil {
			ms, err := ex.members(got, want.PortGroupMembers, z.Ports)
			if err != nil {
				return nil, err
			}
			out = append(out, ms...)
		}
		if want.QoS != nil {
			out = append(out, qosMismatches(got, want.QoS, true)...)
		}
		if want.RowsInclude != nil {
			out = append(out, qosMismatches(got, want.RowsInclude, false)...)
		}
	}
	for i := range out {
		out[i] = m.Key() + ": " + out[i]
	}
	return out, nil
}

// members compares the object's port group members with the ports the
// VMs have on each port group's network (a VM with several NICs is a
// member through its NIC on that network); a listed VM with no NIC on
// any of them is a mismatch. With zone ports (non-nil) only the expected
// ports in that zone's NB are wanted.
func (ex *execution) members(got qos.Desired, vms []string, zonePorts []string) ([]string, error) {
	var want, out []string
	for _, name := range vms {
		vm := ex.sc.VM(name)
		ports, err := ex.env.Ports(vm)
		if err != nil {
			return nil, fmt.Errorf("ports of VM %s: %w", name, err)
		}
		n := 0
		for _, pg := range got.PortGroups {
			if i, _, ok := vm.NIC(pg.ExternalIDs[qos.NetworkKey]); ok && i < len(ports) {
				if zonePorts == nil || slices.Contains(zonePorts, ports[i]) {
					want = append(want, ports[i])
				}
				n++
			}
		}
		if n == 0 {
			out = append(out, fmt.Sprintf("VM %s has no NIC on the networks of the object's port groups", name))
		}
	}
	var have []string
	for _, pg := range got.PortGroups {
		have = append(have, pg.Ports...)
	}
	slices.Sort(want)
	slices.Sort(have)
	have = slices.Compact(have)
	if !slices.Equal(want, have) {
		out = append(out, fmt.Sprintf("port group members %v, want %v (VMs %v)", have, want, vms))
	}
	return out, nil
}

// qosMismatches compares the object's QoS rows with the expected ones:
// the exact set, or (exact false) a subset of them.
func qosMismatches(got qos.Desired, want []scenarios.QoSCheck, exact bool) []string {
	var out []string
	used := make([]bool, len(got.QoS))
	for _, w := range want {
		i := slices.IndexFunc(got.QoS, func(r qos.QoSRow) bool {
			return r.ExternalIDs[qos.RuleIndexKey] == strconv.Itoa(w.Rule) && r.ExternalIDs[qos.NetworkKey] == w.Network
		})
		if i < 0 {
			out = append(out, fmt.Sprintf("no QoS row for rule %d on network %s", w.Rule, w.Network))
			continue
		}
		used[i] = true
		if d := rowDiff(got.QoS[i], w, portGroupOf(got, w.Network)); d != "" {
			out = append(out, fmt.Sprintf("QoS row of rule %d on %s: %s", w.Rule, w.Network, d))
		}
	}
	for i, r := range got.QoS {
		if exact && !used[i] {
			out = append(out, fmt.Sprintf("unexpected QoS row rule-index=%s network=%s match %q", r.ExternalIDs[qos.RuleIndexKey], r.ExternalIDs[qos.NetworkKey], r.Match))
		}
	}
	return out
}

func portGroupOf(got qos.Desired, network string) string {
	for _, pg := range got.PortGroups {
		if pg.ExternalIDs[qos.NetworkKey] == network {
			return pg.Name
		}
	}
	if len(got.PortGroups) == 1 {
		return got.PortGroups[0].Name
	}
	return "<no port group>"
}

func rowDiff(r qos.QoSRow, w scenarios.QoSCheck, pg string) string {
	var d []string
	if match := strings.ReplaceAll(w.Match, "@$pg", "@"+pg); !scenarios.SameMatch(r.Match, match) {
		d = append(d, fmt.Sprintf("match %q, want %q", r.Match, match))
	}
	if r.Priority != w.Priority {
		d = append(d, fmt.Sprintf("priority %d, want %d", r.Priority, w.Priority))
	}
	if r.Action.DSCP != w.DSCP {
		d = append(d, fmt.Sprintf("dscp %d, want %d", r.Action.DSCP, w.DSCP))
	}
	var rate, burst uint32
	if r.Bandwidth != nil {
		rate, burst = r.Bandwidth.Rate, r.Bandwidth.Burst
	}
	if rate != w.RateKbps || burst != w.BurstKbit {
		d = append(d, fmt.Sprintf("bandwidth rate=%d burst=%d, want rate=%d burst=%d", rate, burst, w.RateKbps, w.BurstKbit))
	}
	if r.Direction != qos.DirectionToLport {
		d = append(d, fmt.Sprintf("direction %q, want %q", r.Direction, qos.DirectionToLport))
	}
	return strings.Join(d, ", ")
}

func (kindTable) Wait() stepKind {
	return stepKind{name: "wait", run: func(ex *execution, ctx context.Context, i int, st *scenarios.Step) error {
		return ex.wait(ctx, i, (*scenarios.Check)(st.Wait))
	}}
}

func (kindTable) Expect() stepKind {
	return stepKind{name: "expect", run: func(ex *execution, ctx context.Context, i int, st *scenarios.Step) error {
		mism, err := ex.evaluate(ctx, i, (*scenarios.Check)(st.Expect))
		if err != nil {
			return err
		}
		return failure(mism, "")
	}}
}
