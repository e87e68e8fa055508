package localnetenv

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/nqos/nqos/harness"
	"github.com/nqos/nqos/harness/cplife"
	"github.com/nqos/nqos/internal/qos"
	"github.com/nqos/nqos/reports"
	"github.com/nqos/nqos/scenarios"
)

// legacyObject is one NetworkQoS whose legacy rows a step seeded.
type legacyObject struct {
	Key    string              `json:"key"`       // "ns/name"
	PG     string              `json:"portGroup"` // the port group the migration must create
	Ports  int                 `json:"ports"`     // how many ports the compiler puts in it
	Seeded cplife.SeededLegacy `json:"seeded"`
}

// upgradeRun is one upgrade step's measurements.
type upgradeRun struct {
	objects   []legacyObject
	seededAt  time.Time
	legacyAt  time.Time // first packet of a steady run marked by the legacy rows
	startAt   time.Time // controller process started
	syncedAt  time.Time
	converged convergence
	end       time.Time
	txs       []cplife.Transaction
	orders    []cplife.MigrationOrder
	errs      []string
	marks     cplife.MarkStats // controller start to the end
	before    cplife.MarkStats // seeding to the controller start
	stream    cplife.StreamResult
}

// Upgrade seeds legacy rows for the objects, as the address-set-based
// generation wrote them, waits until they mark the VM's probe stream,
// starts the controller with an NB monitor running, and checks the
// migration's transaction order and the final rows.
func (e *Env) Upgrade(ctx context.Context, legacy []*scenarios.Manifest, vm *scenarios.VM, p *scenarios.Probe) (harness.ControllerResult, error) {
	if e.proc == nil || e.proc.cur != nil {
		return harness.ControllerResult{}, errors.New("upgrade: the controller must not run yet (scenario controller.boot: false)")
	}
	run := &upgradeRun{}
	if err := e.seedLegacy(ctx, legacy, run); err != nil {
		return harness.ControllerResult{}, err
	}
	s, err := e.probeStream(ctx, vm, p)
	if err != nil {
		return harness.ControllerResult{}, err
	}
	err = e.upgradeUnderProbe(ctx, s, run)
	run.stream = s.Stop()
	if err != nil {
		return harness.ControllerResult{}, err
	}
	return run.result(), nil
}

// seedLegacy derives each object's legacy rows from the compiler's rows
// for the cluster's objects and writes them.
func (e *Env) seedLegacy(ctx context.Context, legacy []*scenarios.Manifest, run *upgradeRun) error {
	in, err := (&cplife.Cluster{Kube: e.kube, Dynamic: e.dyn}).Input(ctx)
	if err != nil {
		return err
	}
	want := qos.Compile(in)
	for _, m := range legacy {
		spec, pg, err := e.legacySpec(want, m)
		if err != nil {
			return err
		}
		seeded, err := cplife.SeedLegacy(ctx, e.tb, spec)
		if err != nil {
			return err
		}
		run.objects = append(run.objects, legacyObject{Key: m.Namespace + "/" + m.Name, PG: pg.Name, Ports: len(pg.Ports), Seeded: seeded})
	}
	run.seededAt = time.Now()
	return nil
}

// legacySpec is the legacy form of one object's compiled rows: same
// priority, action, bandwidth and classifier, the source an address set
// of the IPv4 addresses of the scenario VMs in its port group.
func (e *Env) legacySpec(want qos.Desired, m *scenarios.Manifest) (cplife.LegacySpec, qos.PortGroup, error) {
	spec := cplife.LegacySpec{Namespace: m.Namespace, Name: m.Name}
	mine := func(ids map[string]string) bool { return ids[qos.ObjectNameKey] == m.Namespace+":"+m.Name }
	pgs := slices.DeleteFunc(slices.Clone(want.PortGroups), func(pg qos.PortGroup) bool { return !mine(pg.ExternalIDs) })
	switch {
	case len(pgs) != 1:
		return spec, qos.PortGroup{}, fmt.Errorf("legacy rows of %s: it compiles to %d port groups, want 1 (one network)", m.Key(), len(pgs))
	case slices.ContainsFunc(want.AddressSets, func(as qos.AddressSet) bool { return mine(as.ExternalIDs) }):
		return spec, qos.PortGroup{}, fmt.Errorf("legacy rows of %s: it compiles to address sets; legacy seeding supports ipBlock destinations only", m.Key())
	}
	pg := pgs[0]
	ips, err := e.memberIPs(pg)
	if err != nil {
		return spec, pg, fmt.Errorf("legacy rows of %s: %w", m.Key(), err)
	}
	spec.SourceIPs = ips
	for _, row := range want.QoS {
		if !mine(row.ExternalIDs) {
			continue
		}
		r, err := legacyRule(row, pg.Name)
		if err != nil {
			return spec, pg, fmt.Errorf("legacy rows of %s: %w", m.Key(), err)
		}
		spec.Network, spec.Switch = row.ExternalIDs[qos.NetworkKey], row.Switch
		spec.Rules = append(spec.Rules, r)
	}
	slices.SortFunc(spec.Rules, func(a, b cplife.LegacyRule) int { return a.Index - b.Index })
	return spec, pg, nil
}

// legacyRule is one compiled row with its source fragment cut off.
func legacyRule(row qos.QoSRow, pg string) (cplife.LegacyRule, error) {
	rest, ok := strings.CutPrefix(row.Match, "inport == @"+pg)
	if !ok {
		return cplife.LegacyRule{}, fmt.Errorf("compiled match %q does not start with port group %s", row.Match, pg)
	}
	i, err := strconv.Atoi(row.ExternalIDs[qos.RuleIndexKey])
	if err != nil {
		return cplife.LegacyRule{}, fmt.Errorf("compiled row %q: rule index: %w", row.Match, err)
	}
	r := cplife.LegacyRule{Index: i, Priority: row.Priority, DSCP: row.Action.DSCP, Rest: rest}
	if row.Bandwidth != nil {
		r.RateKbps, r.BurstKbits = row.Bandwidth.Rate, row.Bandwidth.Burst
	}
	return r, nil
}

// memberIPs are the IPv4 addresses of the scenario VMs whose port is in
// the port group (what the legacy generation's source set held).
func (e *Env) memberIPs(pg qos.PortGroup) ([]string, error) {
	var ips []string
	for i := range e.sc.Topology.VMs {
		vm := &e.sc.Topology.VMs[i]
		port, err := e.PortName(vm)
		if err != nil || !slices.Contains(pg.Ports, port) || vm.Addresses.V4 == "" {
			continue // a late VM that is not started has no port
		}
		ip, _, _ := strings.Cut(vm.Addresses.V4, "/")
		ips = append(ips, ip)
	}
	if len(ips) == 0 {
		return nil, fmt.Errorf("no VM with an IPv4 address is in port group %s", pg.Name)
	}
	slices.Sort(ips)
	return ips, nil
}

func (e *Env) upgradeUnderProbe(ctx context.Context, s *cplife.Stream, run *upgradeRun) error {
	steady := steadyRun(s)
	var err error
	if run.legacyAt, err = s.WaitMarkedRun(ctx, run.seededAt, steady, markedTimeout); err != nil {
		return fmt.Errorf("probe marked by the legacy rows: %w", err)
	}
	mon, err := cplife.StartNBMonitor(ctx, e.tb.NBAddress())
	if err != nil {
		return err
	}
	defer mon.Close()
	base := mon.Count()
	run.startAt = time.Now()
	c, err := e.startController(ctx)
	if err != nil {
		return err
	}
	run.syncedAt = c.SyncedAt()
	if run.converged, err = e.converge(ctx); err != nil {
		return err
	}
	if _, err := s.WaitMarkedRun(ctx, time.Now(), steady, markedTimeout); err != nil {
		return fmt.Errorf("probe after the migration: %w", err)
	}
	run.end = time.Now()
	if err := mon.Sync(ctx); err != nil {
		return err
	}
	run.txs = mon.Transactions(base)
	run.marks = s.Marks(run.startAt, run.end)
	run.before = s.Marks(run.seededAt, run.startAt)
	run.checkOrder(e.nb.Rows())
	return nil
}

// checkOrder checks each object's migration: the port group inserted
// and holding its ports no later than the transaction that rewrote each
// legacy row, the legacy set deleted strictly afterwards and gone from
// the final rows.
func (run *upgradeRun) checkOrder(final qos.Desired) {
	for _, o := range run.objects {
		order, err := cplife.LegacyMigrationOrder(run.txs, o.Seeded, o.PG)
		run.orders = append(run.orders, order)
		if err != nil {
			run.errs = append(run.errs, fmt.Sprintf("%s: %v", o.Key, err))
		}
		for i, seq := range order.RewriteTx {
			if n := portsAt(run.txs, o.PG, seq); seq > 0 && n < o.Ports {
				run.errs = append(run.errs, fmt.Sprintf("%s: legacy row %s rewritten in transaction %d while port group %s held %d of its %d ports",
					o.Key, o.Seeded.QoSUUIDs[i], seq, o.PG, n, o.Ports))
			}
		}
		if slices.ContainsFunc(final.AddressSets, func(as qos.AddressSet) bool { return as.Name == o.Seeded.AddressSet }) {
			run.errs = append(run.errs, fmt.Sprintf("%s: legacy address set %s is still in the NB", o.Key, o.Seeded.AddressSet))
		}
	}
}

// portsAt is how many ports the port group holds once transaction seq
// committed.
func portsAt(txs []cplife.Transaction, pg string, seq int) int {
	n := 0
	for _, tx := range txs {
		if tx.Seq > seq {
			break
		}
		for _, c := range tx.Changes {
			if c.Table == "Port_Group" && c.Name == pg {
				n = c.Ports
			}
		}
	}
	return n
}

// txAt is the arrival time of transaction seq relative to t (0 if absent).
func txAt(txs []cplife.Transaction, seq int, t time.Time) time.Duration {
	for _, tx := range txs {
		if tx.Seq == seq {
			return tx.At.Sub(t)
		}
	}
	return 0
}

func (run *upgradeRun) result() harness.ControllerResult {
	before := run.before
	ms := []reports.Measure{
		{Name: "probe packets marked by the legacy rows before the controller start", Count: before.Marked, Unit: "packets",
			Note: fmt.Sprintf("%d unmarked; steady marking %v after seeding", before.Unmarked, run.legacyAt.Sub(run.seededAt).Round(time.Millisecond))},
		measure("controller start → synced (migration done)", run.syncedAt.Sub(run.startAt)),
	}
	for i, o := range run.objects {
		ord := run.orders[i]
		last := slices.Max(append([]int{0}, ord.RewriteTx...))
		ms = append(ms,
			reports.Measure{Name: o.Key + ": controller start → port group inserted", Duration: txAt(run.txs, ord.PortGroupTx, run.startAt),
				Note: fmt.Sprintf("transaction %d, %d ports", ord.PortGroupTx, portsAt(run.txs, o.PG, ord.PortGroupTx))},
			reports.Measure{Name: o.Key + ": controller start → last legacy match rewritten", Duration: txAt(run.txs, last, run.startAt),
				Note: fmt.Sprintf("transactions %v", ord.RewriteTx)},
			reports.Measure{Name: o.Key + ": controller start → legacy address set deleted", Duration: txAt(run.txs, ord.SetDeleteTx, run.startAt),
				Note: fmt.Sprintf("transaction %d (%s)", ord.SetDeleteTx, o.Seeded.AddressSet)})
	}
	ms = append(ms,
		measure("controller start → NB equal to the compiler's rows", max(run.converged.at.Sub(run.startAt), 0)),
		measure("marking gap from the controller start (longest time without a marked probe packet)", run.marks.Gap),
		counted("probe packets seen (legacy rows, migration, after)", run.stream.Marks.Packets, "packets"),
		counted("probe packets unmarked", run.stream.Marks.Unmarked, "packets"),
		counted("probe datagrams lost over the whole stream", run.stream.Lost, "datagrams"),
		counted("NB transactions from the controller start", len(run.txs), "transactions"))
	out := run.converged.result()
	out.LifeResult = harness.LifeResult{Packets: run.stream.Marks.Packets, Unmarked: run.stream.Marks.Unmarked, Gap: run.marks.Gap,
		Lost: map[string]int{"out": run.stream.Lost}, Measures: ms,
		Detail: map[string]any{"legacy": run.objects, "order": run.orders, "transactions": run.txs, "converged": run.converged.res,
			"marks": run.marks, "beforeStart": run.before, "stream": run.stream}}
	out.OrderErrors = run.errs
	return out
}
