package localnetenv

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/nqos/nqos/harness/lifeprobe"
	"github.com/nqos/nqos/harness/marks"

	"github.com/nqos/nqos/harness"
	"github.com/nqos/nqos/harness/results"
	"github.com/nqos/nqos/internal/qos"
	"github.com/nqos/nqos/scenarios"
)

// legacyObject is one NetworkQoS whose legacy rows a step seeded.
type legacyObject struct {
	Key    string                 `json:"key"`       // "ns/name"
	PG     string                 `json:"portGroup"` // the port group the migration must create
	Ports  int                    `json:"ports"`     // how many ports the compiler puts in it
	Seeded lifeprobe.SeededLegacy `json:"seeded"`
}

// upgradeRun is one upgrade step's measurements.
type upgradeRun struct {
	// monitored counts from the controller process's start.
	monitored
	objects  []legacyObject
	seededAt time.Time
	legacyAt time.Time // first packet of a steady run marked by the legacy rows
	syncedAt time.Time
	orders   []lifeprobe.MigrationOrder
	errs     []string
	before   marks.Count // seeding to the controller start
	stream   lifeprobe.Stream
}

// Upgrade seeds legacy rows for the objects, as the address-set-based
// generation wrote them, waits until they mark the VM's probe stream,
// starts the controller with an NB monitor running, and checks the
// migration's transaction order and the final rows.
func (e *testbedEnv) Upgrade(ctx context.Context, legacy []*scenarios.Manifest, vm *scenarios.VM, p *scenarios.Probe) (harness.ControllerResult, error) {
	z, err := e.zoneOfVM(vm.Namespace, vm.Name)
	if err != nil {
		return harness.ControllerResult{}, err
	}
	if proc, ok := e.plane.process(z.zone.Name); !ok || proc.cur != nil {
		return harness.ControllerResult{}, errors.New("upgrade: the controller must not run yet (scenario controller.boot: false)")
	}
	run := &upgradeRun{}
	if err := e.seedLegacy(ctx, legacy, run, z.zone.Name); err != nil {
		return harness.ControllerResult{}, err
	}
	s, err := e.probeStream(ctx, vm, p)
	if err != nil {
		return harness.ControllerResult{}, err
	}
	err = e.upgradeUnderProbe(ctx, s, run, z)
	run.stream = s.Stop()
	if err != nil {
		return harness.ControllerResult{}, err
	}
	return run.result(), nil
}

// upgradeUnderProbe starts the controller (interconnect: every zone's)
// and judges the migration in zone z, the probed VM's, whose NB it
// monitors.
func (e *testbedEnv) upgradeUnderProbe(ctx context.Context, s *markedStream, run *upgradeRun, z zoneNB) error {
	var err error
	if run.legacyAt, err = s.WaitMarkedRun(ctx, run.seededAt, markedRun(steadyWindow), markedTimeout); err != nil {
		return fmt.Errorf("probe marked by the legacy rows: %w", err)
	}
	run.monitored, err = e.monitor(ctx, s, z.zone.NB, "migration", func(*nbMonitor) (err error) {
		run.syncedAt, err = e.plane.boot(ctx)
		return err
	})
	if err != nil {
		return err
	}
	run.before = s.Marks(run.seededAt, run.from)
	rows, err := z.nb.Rows(ctx)
	if err != nil {
		return err
	}
	run.checkOrder(rows)
	return nil
}

// checkOrder checks each object's migration: the port group inserted
// and holding its ports no later than the transaction that rewrote each
// legacy row, the legacy set deleted strictly afterwards and gone from
// the final rows.
func (run *upgradeRun) checkOrder(final qos.Desired) {
	for _, o := range run.objects {
		order, err := lifeprobe.LegacyMigrationOrder(run.txs, o.Seeded, o.PG)
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
func portsAt(txs []lifeprobe.Transaction, pg string, seq int) int {
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
func txAt(txs []lifeprobe.Transaction, seq int, t time.Time) time.Duration {
	for _, tx := range txs {
		if tx.Seq == seq {
			return tx.At.Sub(t)
		}
	}
	return 0
}

func (run *upgradeRun) result() harness.ControllerResult {
	before := run.before
	ms := []results.Measure{
		{Name: "probe packets marked by the legacy rows before the controller start", Count: before.Marked, Unit: "packets",
			Note: fmt.Sprintf("%d unmarked; steady marking %v after seeding", before.Unmarked, run.legacyAt.Sub(run.seededAt).Round(time.Millisecond))},
		lifeprobe.Measured("controller start → synced (migration done)", run.syncedAt.Sub(run.from)),
	}
	for i, o := range run.objects {
		ord := run.orders[i]
		last := slices.Max(append([]int{0}, ord.RewriteTx...))
		ms = append(ms,
			results.Measure{Name: o.Key + ": controller start → port group inserted", Duration: txAt(run.txs, ord.PortGroupTx, run.from),
				Note: fmt.Sprintf("transaction %d, %d ports", ord.PortGroupTx, portsAt(run.txs, o.PG, ord.PortGroupTx))},
			results.Measure{Name: o.Key + ": controller start → last legacy match rewritten", Duration: txAt(run.txs, last, run.from),
				Note: fmt.Sprintf("transactions %v", ord.RewriteTx)},
			results.Measure{Name: o.Key + ": controller start → legacy address set deleted", Duration: txAt(run.txs, ord.SetDeleteTx, run.from),
				Note: fmt.Sprintf("transaction %d (%s)", ord.SetDeleteTx, o.Seeded.AddressSet)})
	}
	ms = append(ms,
		lifeprobe.Measured("controller start → NB equal to the compiler's rows", max(run.converged.at.Sub(run.from), 0)),
		lifeprobe.Measured("marking gap from the controller start (longest time without a marked probe packet)", run.marks.Gap),
		lifeprobe.Counted("probe packets seen (legacy rows, migration, after)", run.stream.Marks.Packets, "packets"),
		lifeprobe.Counted("probe packets unmarked", run.stream.Marks.Unmarked, "packets"),
		lifeprobe.Counted("probe datagrams lost over the whole stream", run.stream.Lost, "datagrams"),
		lifeprobe.Counted("NB transactions from the controller start", len(run.txs), "transactions"))
	out := harness.ControllerResult{Divergence: run.converged.divergence(), OrderErrors: run.errs,
		Outcome: run.stream.Outcome(run.stream.Marks, ms, map[string]any{"legacy": run.objects, "order": run.orders,
			"transactions": run.txs, "converged": run.converged.res, "marks": run.marks, "beforeStart": run.before, "stream": run.stream})}
	out.Gap = run.marks.Gap // from the controller start: the legacy rows marked before it
	return out
}
