package harness

import (
	"context"
	"errors"
	"fmt"
	"github.com/nqos/nqos/harness/verdict"
	"github.com/nqos/nqos/harness/world"
	"strings"

	"github.com/nqos/nqos/harness/results"
	"github.com/nqos/nqos/scenarios"
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
	adv      advState    // adversarial.go
	fab      fabricState // fabric.go
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
	ex.recordZones()
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
		rs := results.Step{Index: i, Line: st.Line, Kind: st.Kind(), Summary: st.Describe(), Started: ex.r.now()}
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
		rs.Finished, rs.Status, rs.Measures, rs.Verdicts, rs.Detail = ex.r.now(), results.Pass, ex.measures, ex.verdicts, ex.detail
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

func (ex *execution) label(ctx context.Context, _ int, st *scenarios.Step) error {
	l := st.Label
	vm := ex.sc.VM(l.VM)
	if vm == nil {
		return fmt.Errorf("label: unknown VM %q", l.VM)
	}
	if err := ex.env.SetLabels(ctx, vm, l.Set, l.Remove); err != nil {
		return fmt.Errorf("label VM %s: %w", vm.Name, err)
	}
	ex.world.Relabel(vm.Name, l.Set, l.Remove)
	return nil
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
	return stepKind{name: "label", run: (*execution).label}
}
