package harness

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/nqos/nqos/harness/results"
	"github.com/nqos/nqos/harness/verdict"
	"github.com/nqos/nqos/harness/world"
	"github.com/nqos/nqos/scenarios"
	"github.com/nqos/nqos/scenarios/manifests"
)

// execution is the state of one scenario run.
type execution struct {
	r    *Runner
	sc   *scenarios.Scenario
	env  Env
	fams []scenarios.Family
	dir  string
	res  *results.Scenario
	ovn  scenarios.Version

	running map[string]*group // by flow name
	seen    map[string]bool   // conditions already recorded
	world   *world.World      // the objects as the steps left them, for the intent
	// measures are the figures the current step measured.
	measures []results.Measure
	verdicts []verdict.Verdict
	detail   any
	ovnAdd   *spreadStats // the last ovnBaseline step's port-group add times
	fab      fabricState  // fabric.go
	kinds    map[string]stepKind
	// guestV4 are the IPv4 addresses guestIP steps gave VMs (CIDR): the
	// flows after such a step use them.
	guestV4 map[string]string
}

func (ex *execution) run(ctx context.Context) {
	res := ex.res
	v, err := ex.env.OVNVersion(ctx)
	if err == nil {
		ex.ovn, err = scenarios.ParseVersion(v)
	}
	if err != nil {
		res.Status, res.Error = results.Error, fmt.Sprintf("OVN version of the testbed: %v", err)
		return
	}
	res.OVNVersion = v
	if z, ok := ex.env.(Zoned); ok {
		res.Topology, res.Zones = z.Topology(), z.Zones()
	}
	if res.NBBefore, err = ex.env.Rows(ctx); err != nil {
		res.Status, res.Error = results.Error, fmt.Sprintf("NB rows before the scenario: %v", err)
		return
	}
	audit, err := ex.startAudit(ctx)
	if err != nil {
		res.Status, res.Error = results.Error, err.Error()
		return
	}
	stepErr := ex.steps(ctx)
	if err := ex.finishAll(ctx); err != nil {
		stepErr = errors.Join(stepErr, fmt.Errorf("finishing flows left running: %w", err))
	}
	stepErr = errors.Join(stepErr, ex.clearFabric(ctx))
	res.Violations, res.NBChecks = audit.stop()
	var rowsErr error
	if res.NBAfter, rowsErr = ex.env.Rows(ctx); rowsErr != nil {
		stepErr = errors.Join(stepErr, fmt.Errorf("NB rows after the scenario: %w", rowsErr))
	}
	crashes, err := ex.env.Crashes(ctx)
	if err != nil {
		stepErr = errors.Join(stepErr, fmt.Errorf("daemon crashes: %w", err))
	}
	ex.conclude(stepErr)
	for _, c := range crashes {
		res.Notes = append(res.Notes, "daemon crash (the testbed restarted the daemon): "+c)
	}
	if res.Status != results.Pass || len(crashes) > 0 {
		res.Logs = ex.env.Logs(ctx)
	}
}

// steps runs the steps in order; after the first failing step the rest
// are recorded as not run.
func (ex *execution) steps(ctx context.Context) error {
	var first error
	n := len(ex.sc.Steps)
	for i := range ex.sc.Steps {
		st := &ex.sc.Steps[i]
		rs := results.Step{Index: i, Line: st.Line, Kind: st.Kind(), Summary: st.Describe(), Started: time.Now()}
		if first == nil && ctx.Err() != nil {
			first = fmt.Errorf("run interrupted before steps[%d] (line %d): %w", i, st.Line, ctx.Err())
		}
		if first != nil {
			rs.Status, rs.Finished = results.NotRun, rs.Started
			ex.res.Steps = append(ex.res.Steps, rs)
			continue
		}
		ex.r.Progress.StepStart(ex.res.ID(), rs, n)
		ex.measures, ex.verdicts, ex.detail = nil, nil, nil
		err := ex.step(ctx, i, st)
		rs.Finished, rs.Status, rs.Measures, rs.Verdicts, rs.Detail = time.Now(), results.Pass, ex.measures, ex.verdicts, ex.detail
		if err != nil {
			first = fmt.Errorf("steps[%d] (line %d): %w", i, st.Line, err)
			rs.Status, rs.Error = results.Fail, err.Error()
			var ns *NotSupportedError
			if errors.As(err, &ns) {
				rs.Status = results.Unsupported
			}
		}
		ex.r.Progress.StepEnd(ex.res.ID(), rs)
		ex.res.Steps = append(ex.res.Steps, rs)
	}
	return first
}

// conclude sets the scenario status from the step error, the flows and the
// invariant violations, and lists the failed properties.
func (ex *execution) conclude(stepErr error) {
	res := ex.res
	res.Status = results.Pass
	var cf *verdict.Failure
	var ns *NotSupportedError
	if errors.As(stepErr, &ns) {
		res.Status, res.Error = results.Unsupported, stepErr.Error()
		return
	}
	if stepErr != nil && !errors.As(stepErr, &cf) {
		res.Status, res.Error = results.Error, stepErr.Error()
		return
	}
	res.FailedProperties = failedProperties(res, cf)
	switch {
	case stepErr != nil:
		res.Status, res.Error = results.Fail, stepErr.Error()
		return
	case len(res.Violations) > 0:
		res.Status, res.Error = results.Fail, fmt.Sprintf("NB invariant violated %d times, first: %s", len(res.Violations), res.Violations[0])
		return
	}
	for _, f := range res.Flows {
		if !f.Pass() {
			res.Status, res.Error = results.Fail, fmt.Sprintf("flow %s/%s failed its expectations", f.Name, f.Family)
			return
		}
	}
	if len(res.FailedProperties) > 0 {
		res.Status, res.Error = results.Fail, "failed: "+joinProperties(res.FailedProperties)
	}
}

func (ex *execution) step(ctx context.Context, i int, st *scenarios.Step) error {
	k, ok := ex.kinds[st.Kind()]
	if !ok {
		return fmt.Errorf("step kind %q is not executable", st.Kind())
	}
	return k.run(ex, ctx, i, st)
}

// eachObject runs fn on each object of the step and, once it succeeded,
// records the change in the world.
func (ex *execution) eachObject(st *scenarios.Step, fn func(*scenarios.Manifest) error, record func(*scenarios.Manifest), verb string) error {
	for _, m := range st.Objects {
		if err := fn(m); err != nil {
			return fmt.Errorf("%s %s (manifest %s revision %d): %w", verb, m.Key(), m.ID, m.Revision, err)
		}
		record(m)
	}
	return nil
}

// setLabels changes the labels of a VM's pod and records the change in
// the world.
func (ex *execution) setLabels(ctx context.Context, vm *scenarios.VM, set map[string]string, remove []string) error {
	if err := ex.env.SetLabels(ctx, vm, set, remove); err != nil {
		return err
	}
	ex.world.Relabel(vm.Name, set, remove)
	return nil
}

// failure is a step's error for the mismatches of its checks, prefix
// first; nil when there are none (the checks hold).
func failure(mism verdict.Mismatches, prefix string) error {
	if len(mism) == 0 {
		return nil
	}
	return mism.Failure(prefix)
}

// mismatch is a step's error for the one mismatch msg of property p.
func mismatch(p verdict.Property, msg string) error {
	var m verdict.Mismatches
	m.Add(p, msg)
	return m.Failure("")
}

func joinProperties(ps []verdict.Property) string {
	s := make([]string, len(ps))
	for i, p := range ps {
		s[i] = string(p)
	}
	return strings.Join(s, ", ")
}

func (kindTable) Apply() stepKind {
	return stepKind{name: "apply", run: func(ex *execution, ctx context.Context, _ int, st *scenarios.Step) error {
		if st.VMIM != nil {
			return ex.applyMigration(ctx, st)
		}
		return ex.eachObject(st, func(m *scenarios.Manifest) error { return ex.env.Apply(ctx, m) }, ex.world.Apply, "apply")
	}, stepNeeds: migrationNeeds}
}

// Edit: the edit kind (the new revision is applied).
func (k kindTable) Edit() stepKind {
	e := k.Apply()
	e.name, e.stepNeeds = "edit", nil
	return e
}

func (kindTable) Delete() stepKind {
	return stepKind{name: "delete", run: func(ex *execution, ctx context.Context, _ int, st *scenarios.Step) error {
		return ex.eachObject(st, func(m *scenarios.Manifest) error { return ex.env.Delete(ctx, m) }, ex.world.Remove, "delete")
	}}
}

func (kindTable) Label() stepKind {
	return stepKind{name: "label", run: func(ex *execution, ctx context.Context, _ int, st *scenarios.Step) error {
		l := st.Label
		if err := ex.setLabels(ctx, ex.sc.VM(l.VM), l.Set, l.Remove); err != nil {
			return fmt.Errorf("label VM %s: %w", l.VM, err)
		}
		return nil
	}}
}

// auditor is the NB invariant watcher of a scenario with
// invariants.nbAudit: it audits every committed NB state (not a periodic
// sample) from the scenario's first step until after its last.
type auditor struct {
	w     Watch
	start time.Time
}

// startAudit starts the watcher; a nil *auditor (no nbAudit invariant)
// does nothing. A watcher that cannot start is an environment error.
func (ex *execution) startAudit(ctx context.Context) (*auditor, error) {
	if !ex.sc.Invariants.NBAudit {
		return nil, nil
	}
	var neverOwn []ObjectKey
	for _, id := range ex.sc.Invariants.NeverOwnRows {
		m, _ := ex.sc.Manifests.Get(id)
		neverOwn = append(neverOwn, ObjectKey{Namespace: m.Namespace, Name: m.Name})
	}
	w, err := ex.env.Watch(ctx, neverOwn)
	if err != nil {
		return nil, fmt.Errorf("start the NB invariant watcher: %w", err)
	}
	return &auditor{w: w, start: time.Now()}, nil
}

// stop ends the watcher and returns every distinct sighting, in the order
// first seen, as "+<offset> <row>: <problem>" (offset from the watcher's
// start), and how many NB states were audited.
func (a *auditor) stop() ([]string, int) {
	if a == nil {
		return nil, 0
	}
	ss := a.w.Stop()
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = fmt.Sprintf("+%.3fs %s: %s", s.At.Sub(a.start).Seconds(), s.Row, s.Problem)
	}
	return out, a.w.Checks()
}

// migrationNeeds: an apply step creating a VirtualMachineInstanceMigration
// needs the migration capability.
func migrationNeeds(st *scenarios.Step) []Capability {
	if st.VMIM != nil {
		return []Capability{CapMigration}
	}
	return nil
}

// applyMigration runs an apply step of a VirtualMachineInstanceMigration
// as KubeVirt does: it decides from the world as the steps left it
// (whether the VMI runs, where every VM is) whether the admission
// webhook denies the object (not created) or the scheduler finds no
// target (created, status Failed), else creates it, live-migrates the
// VMI through the same machinery as a migrate step under the step's
// probe and records status Succeeded. The outcome is judged against the
// step's refused expectation (property migration).
func (ex *execution) applyMigration(ctx context.Context, st *scenarios.Step) error {
	x := st.VMIM
	running := x.VM != "" && !ex.world.Absent(x.VM)
	load := map[int]int{}
	for _, vm := range ex.sc.Topology.VMs {
		if !ex.world.Absent(vm.Name) {
			load[ex.world.Node(vm.Name)]++
		}
	}
	to, refusal := x.Decide(running, ex.world.Node(x.VM), load)
	if refusal != nil {
		return ex.refuseMigration(ctx, st, refusal)
	}
	if st.Refused != nil {
		return mismatch(verdict.MigrationOutcome, fmt.Sprintf("%s: expected refused (%q), but KubeVirt migrates VMI %s to node %d",
			x.Manifest.Key(), st.Refused.Reason, x.Migration.VMIKey(), to))
	}
	if err := ex.env.Apply(ctx, x.Manifest); err != nil {
		return fmt.Errorf("create %s: %w", x.Manifest.Key(), err)
	}
	m := &scenarios.Migrate{VM: x.VM, To: to, Mode: x.Mode}
	ex.measures = append(ex.measures, results.Measure{Name: "target node (scheduler)", Note: fmt.Sprintf("node %d (%s), %s", to, x.Nodes[to].Name, x.Mode)})
	l, err := capable[Lifecycle](ex, CapMigration)
	if err == nil {
		err = ex.lifecycle(ctx, st, ex.migration(l, st, m))
	}
	phase, reason := "Succeeded", ""
	if err != nil {
		phase, reason = "Failed", err.Error()
	}
	if serr := ex.migrationStatus(ctx, x.Manifest, phase, reason, x.Nodes[to].Name); serr != nil && err == nil {
		err = serr
	}
	return err
}

// refuseMigration records a refusal: the object is created (status
// Failed with KubeVirt's message) unless the admission webhook denied
// it; it passes only when the step expects this refusal.
func (ex *execution) refuseMigration(ctx context.Context, st *scenarios.Step, r *manifests.Refusal) error {
	x := st.VMIM
	ex.measures = append(ex.measures, results.Measure{Name: "refused: " + r.Reason, Note: r.Message})
	if r.Reason != manifests.ReasonAdmission {
		if err := ex.env.Apply(ctx, x.Manifest); err != nil {
			return fmt.Errorf("create %s: %w", x.Manifest.Key(), err)
		}
		if err := ex.migrationStatus(ctx, x.Manifest, "Failed", r.Error(), ""); err != nil {
			return err
		}
	}
	if st.Refused == nil {
		return mismatch(verdict.MigrationOutcome, fmt.Sprintf("%s refused: %s", x.Manifest.Key(), r.Error()))
	}
	if !st.Refused.Matches(r) {
		return mismatch(verdict.MigrationOutcome, fmt.Sprintf("%s refused with %q, expected a refusal containing %q", x.Manifest.Key(), r.Error(), st.Refused.Reason))
	}
	return nil
}

// migrationStatus writes the migration's status.phase (and the failure
// reason or target node) to the API server.
func (ex *execution) migrationStatus(ctx context.Context, m *scenarios.Manifest, phase, reason, target string) error {
	status := map[string]any{"phase": phase}
	state := map[string]any{}
	if target != "" {
		state["targetNode"] = target
	}
	if reason != "" {
		state["failed"], state["failureReason"] = true, reason
	}
	status["migrationState"] = state
	next, err := m.Patched(map[string]any{"status": status})
	if err == nil {
		err = ex.env.Apply(ctx, next)
	}
	if err != nil {
		return fmt.Errorf("status of %s: %w", m.Key(), err)
	}
	return nil
}
