package harness

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/nqos/nqos/harness/lifeprobe"
	"github.com/nqos/nqos/harness/verdict"

	"github.com/nqos/nqos/harness/results"
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
		vm := ex.sc.VM(name)
		if vm == nil {
			return fmt.Errorf("startVM: unknown VM %q", name)
		}
		if err := ex.startVM(ctx, vm); err != nil {
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
	ex.world.StartVM(vm.Name)
	groups, err := ex.intendedGroups(vm)
	if err != nil {
		return err
	}
	timeout := ex.r.JoinTimeout
	if timeout <= 0 {
		timeout = scenarios.DefaultWaitTimeout
	}
	jctx, cancel := context.WithCancel(ctx)
	defer cancel()
	joined := make(chan joinResult, 1)
	go func() {
		at, err := ex.awaitGroups(jctx, lsp, groups, timeout)
		joined <- joinResult{at, err}
	}()
	created := time.Now()
	if err := ex.env.CreatePort(ctx, vm); err != nil {
		return fmt.Errorf("create the port of VM %s: %w", vm.Name, err)
	}
	ex.measures = append(ex.measures, results.Measure{Name: vm.Name + " LSP created → port up", Duration: time.Since(created), Note: lsp})
	j := <-joined
	if j.err != nil {
		return fmt.Errorf("VM %s: %w", vm.Name, j.err)
	}
	note := fmt.Sprintf("%d port groups", len(groups))
	if len(groups) == 0 {
		note = "no NetworkQoS selects it"
	}
	ex.measures = append(ex.measures, results.Measure{Name: vm.Name + " LSP created → in its port groups", Duration: max(j.at.Sub(created), 0), Note: note})
	return nil
}

type joinResult struct {
	at  time.Time
	err error
}

// intendedGroups are the port groups the compiler's intent puts the VM's
// port in, sorted.
func (ex *execution) intendedGroups(vm *scenarios.VM) ([]string, error) {
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
	// the NB rows are the client's cache: polling them finely is cheap
	// and bounds the measurement's resolution
	interval := 10 * time.Millisecond
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	tick := time.NewTicker(interval)
	defer tick.Stop()
	for {
		rows, err := ex.env.Rows(ctx)
		if err != nil {
			return time.Time{}, fmt.Errorf("waiting for port %s in %v: %w", lsp, groups, err)
		}
		missing := missingGroups(rows, lsp, groups)
		if len(missing) == 0 {
			return time.Now(), nil
		}
		select {
		case <-ctx.Done():
			return time.Time{}, fmt.Errorf("waiting for port %s in %v: %w", lsp, missing, ctx.Err())
		case <-deadline.C:
			var m verdict.Mismatches
			m.Add(verdict.Rows, fmt.Sprintf("port %s is not in port groups %v within %s of its creation", lsp, missing, timeout))
			return time.Time{}, m.Failure("")
		case <-tick.C:
		}
	}
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
// step and judges its probe: some probe packets seen, at most MaxUnmarked
// without the object's DSCP, at most MaxLost lost per direction, and for a
// daemon restart at most MaxGap without a marked packet.
func (ex *execution) lifecycle(ctx context.Context, st *scenarios.Step, ops []operation) error {
	var mism verdict.Mismatches
	var details []any
	for _, op := range ops {
		res, err := op.run(ctx)
		if err != nil {
			return fmt.Errorf("%s VM %s: %w", st.Kind(), op.vm.Name, err)
		}
		if op.after != nil {
			op.after()
		}
		ex.measures = append(ex.measures, res.Measures...)
		details = append(details, res.Detail)
		vs := probeVerdicts(op.vm.Name, res, st.Probe)
		ex.verdicts = append(ex.verdicts, vs...)
		mism.Judge(vs...)
	}
	ex.detail = details
	if len(mism) > 0 {
		return mism.Failure("")
	}
	return nil
}

// operation is one lifecycle operation of a step on one VM; after
// records its effect in the world once it succeeded.
type operation struct {
	vm    *scenarios.VM
	run   func(context.Context) (lifeprobe.Outcome, error)
	after func()
}

func (ex *execution) migrateOps(st *scenarios.Step) []operation {
	return ex.migrationOps(st, st.Migrate)
}

// migrationOps live-migrate m.VM as m says under the step's probe.
func (ex *execution) migrationOps(st *scenarios.Step, m *scenarios.Migrate) []operation {
	vm := ex.sc.VM(m.VM)
	return []operation{{vm: vm,
		run: through(ex, CapMigration, func(ctx context.Context, l Lifecycle) (lifeprobe.Outcome, error) {
			return l.Migrate(ctx, vm, m, st.Probe)
		}),
		after: func() { ex.world.Move(vm.Name, m.To) }}}
}

func (ex *execution) restartDaemonOps(st *scenarios.Step) []operation {
	vm := ex.sc.VM(st.RestartDaemon.VM)
	return []operation{{vm: vm, run: through(ex, CapDaemonRestart, func(ctx context.Context, d Daemons) (lifeprobe.Outcome, error) {
		return d.RestartDaemon(ctx, st.RestartDaemon, vm, st.Probe)
	})}}
}

func (ex *execution) guestIPOps(st *scenarios.Step) []operation {
	vm := ex.sc.VM(st.GuestIP.VM)
	return []operation{{vm: vm,
		run: through(ex, CapGuestIP, func(ctx context.Context, l Lifecycle) (lifeprobe.Outcome, error) {
			return l.ChangeGuestIP(ctx, vm, st.GuestIP.V4, st.Probe)
		}),
		after: func() {
			if ex.guestV4 == nil {
				ex.guestV4 = map[string]string{}
			}
			ex.guestV4[vm.Name] = st.GuestIP.V4
		}}}
}

func (ex *execution) restartLauncherOps(st *scenarios.Step) []operation {
	var ops []operation
	for _, name := range st.RestartLauncher {
		vm := ex.sc.VM(name)
		ops = append(ops, operation{vm: vm, run: through(ex, CapLauncherRestart, func(ctx context.Context, l Lifecycle) (lifeprobe.Outcome, error) {
			return l.RestartLauncher(ctx, vm, st.Probe)
		})})
	}
	return ops
}

// through runs an operation through the capability c of the
// environment, T its interface.
func through[T any](ex *execution, c Capability, op func(context.Context, T) (lifeprobe.Outcome, error)) func(context.Context) (lifeprobe.Outcome, error) {
	return func(ctx context.Context) (lifeprobe.Outcome, error) {
		t, err := capable[T](ex, c)
		if err != nil {
			return lifeprobe.Outcome{}, err
		}
		return op(ctx, t)
	}
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
	return stepKind{name: "migrate", run: lifecycleRun((*execution).migrateOps), needs: []Capability{CapMigration}}
}

func (kindTable) RestartLauncher() stepKind {
	return stepKind{name: "restartLauncher", run: lifecycleRun((*execution).restartLauncherOps), needs: []Capability{CapLauncherRestart}}
}

func (kindTable) GuestIP() stepKind {
	return stepKind{name: "guestIP", run: lifecycleRun((*execution).guestIPOps), needs: []Capability{CapGuestIP}}
}

func (kindTable) RestartDaemon() stepKind {
	return stepKind{name: "restartDaemon", run: lifecycleRun((*execution).restartDaemonOps), needs: []Capability{CapDaemonRestart}}
}

// lifecycleRun runs a lifecycle step's operations under its probe.
func lifecycleRun(ops func(ex *execution, st *scenarios.Step) []operation) func(*execution, context.Context, int, *scenarios.Step) error {
	return func(ex *execution, ctx context.Context, _ int, st *scenarios.Step) error {
		return ex.lifecycle(ctx, st, ops(ex, st))
	}
}
