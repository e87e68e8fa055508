package harness

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/nqos/nqos/harness/lifeprobe"
	"github.com/nqos/nqos/harness/results"
	"github.com/nqos/nqos/harness/verdict"
	"github.com/nqos/nqos/internal/qos"
	"github.com/nqos/nqos/scenarios"
)

// startVMs starts late VMs one after the other: the launcher pod and
// guest first, then the logical switch port. For each it measures the
// time from the port's creation to the port being bound up and,
// independently (a poller of the NB rows runs from before the port is
// created), to the port being a member of every port group the intent
// puts it in: the controller reacting to a VM that appears after its
// NetworkQoS. A port that does not join within the join timeout fails
// the step (nb-rows).
func (ex *execution) startVMs(ctx context.Context, names []string) error {
	for _, name := range names {
		if err := ex.startVM(ctx, ex.sc.VM(name)); err != nil {
			return err
		}
	}
	return nil
}

func (ex *execution) startVM(ctx context.Context, vm *scenarios.VM) error {
	lsp, err := ex.env.StartVM(ctx, vm)
	if err != nil {
		return fmt.Errorf("start VM %s: %w", vm.Name, err)
	}
	groups, err := ex.started(vm)
	if err != nil {
		return err
	}
	jctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var joinedAt time.Time
	joined := make(chan error, 1)
	go func() {
		var err error
		joinedAt, err = ex.awaitGroups(jctx, lsp, groups, ex.joinTimeout())
		joined <- err
	}()
	created := time.Now()
	if err := ex.env.CreatePort(ctx, vm); err != nil {
		return fmt.Errorf("create the port of VM %s: %w", vm.Name, err)
	}
	ex.measures = append(ex.measures, results.Measure{Name: vm.Name + " LSP created → port up", Duration: time.Since(created), Note: lsp})
	if err := <-joined; err != nil {
		return fmt.Errorf("VM %s: %w", vm.Name, err)
	}
	note := fmt.Sprintf("%d port groups", len(groups))
	if len(groups) == 0 {
		note = "no NetworkQoS selects it"
	}
	ex.measures = append(ex.measures, results.Measure{Name: vm.Name + " LSP created → in its port groups", Duration: max(joinedAt.Sub(created), 0), Note: note})
	return nil
}

// started records the VM started in the world and returns the port
// groups the compiler's intent then puts its port in, sorted.
func (ex *execution) started(vm *scenarios.VM) ([]string, error) {
	ex.world.StartVM(vm.Name)
	want, err := ex.world.Compile()
	if err != nil {
		return nil, err
	}
	port := ex.world.Port(vm)
	var out []string
	for _, pg := range want.PortGroups {
		if slices.Contains(pg.Ports, port) {
			out = append(out, pg.Name)
		}
	}
	slices.Sort(out)
	return out, nil
}

// awaitGroups polls the NB until lsp is in every one of groups and
// returns when it first saw that; the timeout counts from the call.
func (ex *execution) awaitGroups(ctx context.Context, lsp string, groups []string, timeout time.Duration) (time.Time, error) {
	var missing []string
	var at time.Time
	// the NB rows are the client's cache: polling them finely is cheap
	// and bounds the measurement's resolution
	err := poll(ctx, 10*time.Millisecond, timeout, func() (bool, error) {
		rows, err := ex.env.Rows(ctx)
		if err != nil {
			return false, fmt.Errorf("waiting for port %s in %v: %w", lsp, groups, err)
		}
		missing, at = missingGroups(rows, lsp, groups), time.Now()
		return len(missing) == 0, nil
	}, func(ctxErr error) error {
		if ctxErr != nil {
			return fmt.Errorf("waiting for port %s in %v: %w", lsp, missing, ctxErr)
		}
		return mismatch(verdict.Rows, fmt.Sprintf("port %s is not in port groups %v within %s of its creation", lsp, missing, timeout))
	})
	if err != nil {
		return time.Time{}, err
	}
	return at, nil
}

// missingGroups are the groups that do not (yet) contain lsp.
func missingGroups(rows qos.Desired, lsp string, groups []string) []string {
	var missing []string
	for _, name := range groups {
		i := slices.IndexFunc(rows.PortGroups, func(pg qos.PortGroup) bool { return pg.Name == name })
		if i < 0 || !slices.Contains(rows.PortGroups[i].Ports, lsp) {
			missing = append(missing, name)
		}
	}
	return missing
}

// lifecycle runs a migrate, restartLauncher, guestIP or restartDaemon
// step's operation on each of its VMs and judges its probe: some probe
// packets seen, at most MaxUnmarked without the object's DSCP, at most
// MaxLost lost per direction, and for a daemon restart at most MaxGap
// without a marked packet.
func (ex *execution) lifecycle(ctx context.Context, st *scenarios.Step, ops lifeOps) error {
	var mism verdict.Mismatches
	var details []any
	for _, name := range ops.vms {
		vm := ex.sc.VM(name)
		res, err := ops.run(ctx, vm)
		if err != nil {
			return fmt.Errorf("%s VM %s: %w", st.Kind(), vm.Name, err)
		}
		if ops.after != nil {
			ops.after(vm)
		}
		ex.measures = append(ex.measures, res.Measures...)
		details = append(details, res.Detail)
		vs := probeVerdicts(vm.Name, res, st.Probe)
		ex.verdicts = append(ex.verdicts, vs...)
		mism.Judge(vs...)
	}
	ex.detail = details
	return failure(mism, "")
}

// lifeOps are a lifecycle step's operation run on each of its VMs, one
// after the other; after, if set, records an operation's effect in the
// world once it succeeded.
type lifeOps struct {
	vms   []string
	run   func(context.Context, *scenarios.VM) (lifeprobe.Outcome, error)
	after func(*scenarios.VM)
}

// migration live-migrates m.VM as m says under the step's probe.
func (ex *execution) migration(l Lifecycle, st *scenarios.Step, m *scenarios.Migrate) lifeOps {
	return lifeOps{vms: []string{m.VM}, run: func(ctx context.Context, vm *scenarios.VM) (lifeprobe.Outcome, error) {
		return l.Migrate(ctx, vm, m, st.Probe)
	}, after: func(vm *scenarios.VM) { ex.world.Move(vm.Name, m.To) }}
}

// probeVerdicts judge a lifecycle probe: some packets seen and at most
// MaxUnmarked without the object's DSCP, at most MaxLost lost per
// direction (sorted), and with a MaxGap at most that long without a
// marked packet.
func probeVerdicts(vm string, res lifeprobe.Outcome, p *scenarios.Probe) []verdict.Verdict {
	vs := []verdict.Verdict{verdict.ProbeMarks(vm, p.Peer, res.Packets, res.Unmarked, p.MaxUnmarked, p.DSCP)}
	for _, dir := range slices.Sorted(maps.Keys(res.Lost)) {
		vs = append(vs, verdict.ProbeLoss(vm, dir, res.Lost[dir], res.Sent[dir], p.MaxLost))
	}
	if p.MaxGap > 0 {
		vs = append(vs, verdict.MarkingGap(vm, res.Gap, p.MaxGap, res.Packets))
	}
	return vs
}

func (kindTable) Migrate() stepKind {
	return lifecycleKind("migrate", CapMigration, func(ex *execution, st *scenarios.Step, l Lifecycle) lifeOps {
		return ex.migration(l, st, st.Migrate)
	})
}

func (kindTable) RestartLauncher() stepKind {
	return lifecycleKind("restartLauncher", CapLauncherRestart, func(ex *execution, st *scenarios.Step, l Lifecycle) lifeOps {
		return lifeOps{vms: st.RestartLauncher, run: func(ctx context.Context, vm *scenarios.VM) (lifeprobe.Outcome, error) {
			return l.RestartLauncher(ctx, vm, st.Probe)
		}}
	})
}

func (kindTable) GuestIP() stepKind {
	return lifecycleKind("guestIP", CapGuestIP, func(ex *execution, st *scenarios.Step, l Lifecycle) lifeOps {
		return lifeOps{vms: []string{st.GuestIP.VM}, run: func(ctx context.Context, vm *scenarios.VM) (lifeprobe.Outcome, error) {
			return l.ChangeGuestIP(ctx, vm, st.GuestIP.V4, st.Probe)
		}, after: func(vm *scenarios.VM) {
			if ex.guestV4 == nil {
				ex.guestV4 = map[string]string{}
			}
			ex.guestV4[vm.Name] = st.GuestIP.V4
		}}
	})
}

func (kindTable) RestartDaemon() stepKind {
	return lifecycleKind("restartDaemon", CapDaemonRestart, func(ex *execution, st *scenarios.Step, d Daemons) lifeOps {
		return lifeOps{vms: []string{st.RestartDaemon.VM}, run: func(ctx context.Context, vm *scenarios.VM) (lifeprobe.Outcome, error) {
			return d.RestartDaemon(ctx, st.RestartDaemon, vm, st.Probe)
		}}
	})
}

// lifecycleKind is a lifecycle step kind needing the capability c, T its
// interface: it runs the step's operations (ops, through the environment
// as T) under its probe.
func lifecycleKind[T any](name string, c Capability, ops func(ex *execution, st *scenarios.Step, t T) lifeOps) stepKind {
	return capKind(name, c, func(ex *execution, ctx context.Context, _ int, st *scenarios.Step, t T) error {
		return ex.lifecycle(ctx, st, ops(ex, st, t))
	})
}

// AppearWindow is when a new VM's first marked packet may leave, from
// its LSP's creation: not before the LSP exists (the controller's
// bridging row names the port before its LSP exists, so OVN may mark the
// port's first packet, before the port joined its port group), and not
// after the later of the port being up and the join plus OVN's own
// slowest port-group change time measured in the same run (ovnMax), plus
// tol.
func AppearWindow(a lifeprobe.Appearance, ovnMax, tol time.Duration) (lo, hi time.Duration) {
	return 0, max(a.PortUp, a.InGroup+ovnMax) + tol
}

// startVMsProbed starts late VMs under the step's probe and judges when
// marking started against OVN's own port-group change time.
func (ex *execution) startVMsProbed(ctx context.Context, st *scenarios.Step) error {
	if !hasV4(ex.fams) {
		ex.measures = append(ex.measures, results.Measure{Name: "probe not run", Note: "the startVM probe is IPv4 and this run has no IPv4"})
		return ex.startVMs(ctx, st.StartVM)
	}
	if ex.ovnAdd == nil {
		return fmt.Errorf("startVM probe: no ovnBaseline step measured OVN's own port-group change time before")
	}
	var mism verdict.Mismatches
	var details []any
	for _, name := range st.StartVM {
		vm := ex.sc.VM(name)
		a, m, err := ex.startVMProbed(ctx, vm, st.Probe, *ex.ovnAdd)
		if err != nil {
			return err
		}
		details = append(details, a)
		mism = append(mism, m...)
	}
	ex.detail = details
	return failure(mism, "")
}

func (ex *execution) startVMProbed(ctx context.Context, vm *scenarios.VM, p *scenarios.Probe, ovn spreadStats) (lifeprobe.Appearance, verdict.Mismatches, error) {
	adv, err := capable[Adversary](ex, CapAdversary)
	if err != nil {
		return lifeprobe.Appearance{}, nil, err
	}
	a, err := adv.StartVMProbed(ctx, vm, p)
	if err != nil {
		return a, nil, fmt.Errorf("start VM %s under a probe: %w", vm.Name, err)
	}
	groups, err := ex.started(vm)
	if err != nil {
		return a, nil, err
	}
	if _, err := ex.awaitGroups(ctx, a.LSP, groups, ex.joinTimeout()); err != nil {
		return a, nil, fmt.Errorf("VM %s: %w", vm.Name, err)
	}
	lo, hi := AppearWindow(a, ovn.max, p.MarkedWithin)
	m := func(name string, d time.Duration, note string) results.Measure {
		return results.Measure{Name: vm.Name + " " + name, Duration: d, Note: note}
	}
	o := a.Origin()
	if a.LSPBefore() > 0 {
		ex.measures = append(ex.measures, m("LSP created (by ovnkube) → probe start", a.LSPBefore(), a.LSP))
	}
	ex.measures = append(ex.measures,
		m(o+" → port up", a.PortUp, a.LSP),
		m(o+" → in its port group", a.InGroup, p.Manifest.Key()),
		m(o+" → first probe packet on the uplink", a.FirstPacket, ""),
		m(o+" → first marked packet on the uplink", a.FirstMarked, fmt.Sprintf("DSCP %d, window [%v, %v]", p.DSCP, lo, hi)),
		m("OVN's own port-group change → first marked (same run, median)", ovn.median, fmt.Sprintf("min %v, max %v", ovn.min, ovn.max)),
		m("difference: "+o+" → first marked minus OVN's own port-group change (median)", a.FirstMarked-ovn.median, ""),
		results.Measure{Name: vm.Name + " probe packets unmarked", Count: a.Marking.Unmarked, Unit: "packets", Note: fmt.Sprintf("of %d seen", a.Marking.Packets)})
	vs := []verdict.Verdict{
		verdict.FirstMarked(vm.Name, a.FirstMarked, lo, hi, a.Marking.Packets, fmt.Sprintf("join %v, port up %v, OVN's own max %v, tolerance %v",
			a.InGroup, a.PortUp, ovn.max, p.MarkedWithin)),
		verdict.ProbeMarks(vm.Name, p.Peer, a.Marking.Packets, a.Marking.Unmarked, p.MaxUnmarked, p.DSCP),
	}
	ex.verdicts = append(ex.verdicts, vs...)
	var mism verdict.Mismatches
	mism.Judge(vs...)
	return a, mism, nil
}

func (ex *execution) joinTimeout() time.Duration {
	if ex.r.JoinTimeout > 0 {
		return ex.r.JoinTimeout
	}
	return scenarios.DefaultWaitTimeout
}

// StartVM: the startVM kind; under a probe it times the first marked
// packet.
func (kindTable) StartVM() stepKind {
	return stepKind{name: "startVM", run: func(ex *execution, ctx context.Context, _ int, st *scenarios.Step) error {
		if st.Probe != nil {
			return ex.startVMsProbed(ctx, st)
		}
		return ex.startVMs(ctx, st.StartVM)
	}, probedNeeds: []Capability{CapAdversary}}
}

// killInFlight is how many transactions of a SIGKILLed controller may
// still commit after it is gone: one per reconcile worker
// (internal/controller runs 8) already sent when the signal lands. A
// graceful stop leaves none.
const killInFlight = 8

// ControllerRestart is one controller restart.
type ControllerRestart struct {
	Mode string // scenarios.ControllerGraceful or ControllerKill9
	// Burst, if set, runs concurrently with the restart: the object
	// changes the controller is reconciling. With AfterTx > 0 the
	// controller is stopped right after the AfterTx-th NB transaction
	// since the burst began.
	Burst   func(ctx context.Context) error
	AfterTx int
}

// ControllerResult is what a controller step measured.
type ControllerResult struct {
	lifeprobe.Outcome
	Divergence
	// TxWhileDown counts NB transactions between the old process's exit
	// and the new one's start (restartController).
	TxWhileDown int
	// OrderErrors are the ways the legacy migration broke its order
	// (upgrade).
	OrderErrors []string
}

// Divergence is how the NB still differed from the compiler's rows for
// the cluster's objects when a controller came back and the convergence
// deadline passed (none: converged): Missing and Extra rows (Extra holds
// orphans and duplicates) and Problems, the NB audit's findings then
// (dangling references, duplicate ids, rows off every switch).
type Divergence struct {
	Missing, Extra, Problems []string
}

// judge adds the divergence to mism; who names the controller that came
// back.
func (d Divergence) judge(mism *verdict.Mismatches, who string) {
	if len(d.Missing)+len(d.Extra) > 0 {
		mism.Add(verdict.Rows, fmt.Sprintf("after %s came back the NB differs from the compiler's rows: %d missing %v, %d extra (orphans, duplicates) %v",
			who, len(d.Missing), d.Missing, len(d.Extra), d.Extra))
	}
	if len(d.Problems) > 0 {
		mism.Add(verdict.Rows, fmt.Sprintf("NB audit after %s came back: %s", who, strings.Join(d.Problems, "; ")))
	}
}

// controllerStep runs a restartController or upgrade step and judges it.
func (ex *execution) controllerStep(ctx context.Context, _ int, st *scenarios.Step, cp ControllerProcess) error {
	var (
		res ControllerResult
		err error
		vm  *scenarios.VM
	)
	if u := st.Upgrade; u != nil {
		vm = ex.sc.VM(u.VM)
		res, err = cp.Upgrade(ctx, u.Objects, vm, st.Probe)
	} else {
		r := st.RestartController
		vm = ex.sc.VM(r.VM)
		spec := ControllerRestart{Mode: r.Mode, AfterTx: r.AfterTx}
		if len(r.Applied)+len(r.Deleted) > 0 {
			spec.Burst = ex.burst(r)
		}
		res, err = cp.RestartController(ctx, spec, vm, st.Probe)
	}
	if err != nil {
		return fmt.Errorf("%s (probe VM %s): %w", st.Kind(), vm.Name, err)
	}
	ex.measures, ex.detail = res.Measures, res.Detail
	ex.verdicts = probeVerdicts(vm.Name, res.Outcome, st.Probe)
	return failure(judgeController(vm.Name, st, res), "")
}

// burst applies, then deletes, the step's manifests one after the other
// and records each change in the world.
func (ex *execution) burst(r *scenarios.RestartController) func(context.Context) error {
	return func(ctx context.Context) error {
		for _, m := range r.Applied {
			if err := ex.env.Apply(ctx, m); err != nil {
				return fmt.Errorf("apply %s: %w", m.Key(), err)
			}
			ex.world.Apply(m)
		}
		for _, m := range r.Deleted {
			if err := ex.env.Delete(ctx, m); err != nil {
				return fmt.Errorf("delete %s: %w", m.Key(), err)
			}
			ex.world.Remove(m)
		}
		return nil
	}
}

// judgeController checks the probe (unmarked, lost, gap), the NB against
// the compiler's rows, the writers while no controller ran and the
// migration order.
func judgeController(vm string, st *scenarios.Step, res ControllerResult) verdict.Mismatches {
	var mism verdict.Mismatches
	mism.Judge(probeVerdicts(vm, res.Outcome, st.Probe)...)
	res.judge(&mism, "the controller")
	if r := st.RestartController; r != nil {
		allowed := 0
		if r.Mode == scenarios.ControllerKill9 {
			allowed = killInFlight
		}
		if res.TxWhileDown > allowed {
			mism.Add(verdict.Writers, fmt.Sprintf("%d NB transactions while no controller ran, at most %d allowed after %s", res.TxWhileDown, allowed, r.Mode))
		}
	}
	mism.Add(verdict.Migration, res.OrderErrors...)
	return mism
}

func (kindTable) RestartController() stepKind {
	return capKind("restartController", CapControllerProcess, (*execution).controllerStep)
}

func (kindTable) Upgrade() stepKind {
	return capKind("upgrade", CapControllerProcess, (*execution).controllerStep)
}
