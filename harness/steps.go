package harness

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/nqos/nqos/reports"
	"github.com/nqos/nqos/scenarios"
)

// execution is the state of one scenario run.
type execution struct {
	r    *Runner
	sc   *scenarios.Scenario
	env  Env
	fams []scenarios.Family
	dir  string
	res  *reports.Scenario
	ovn  scenarios.Version

	running map[string]*group // by flow name
	seen    map[string]bool   // conditions already recorded
	world   *world            // the objects as the steps left them, for the intent
	// measures are the figures the current step measured.
	measures []reports.Measure
	detail   any
	adv      advState // adversarial.go
}

func (ex *execution) run(ctx context.Context) {
	res := ex.res
	v, err := ex.env.OVNVersion(ctx)
	if err == nil {
		ex.ovn, err = scenarios.ParseVersion(v)
	}
	if err != nil {
		res.Status, res.Error = reports.Error, fmt.Sprintf("OVN version of the testbed: %v", err)
		return
	}
	res.OVNVersion = v
	if res.NBBefore, err = ex.env.Rows(ctx); err != nil {
		res.Status, res.Error = reports.Error, fmt.Sprintf("NB rows before the scenario: %v", err)
		return
	}
	audit, err := ex.startAudit(ctx)
	if err != nil {
		res.Status, res.Error = reports.Error, err.Error()
		return
	}
	stepErr := ex.steps(ctx)
	if err := ex.finishAll(ctx); err != nil {
		stepErr = errors.Join(stepErr, fmt.Errorf("finishing flows left running: %w", err))
	}
	res.Violations, res.NBChecks = audit.stop()
	var rowsErr error
	if res.NBAfter, rowsErr = ex.env.Rows(ctx); rowsErr != nil {
		stepErr = errors.Join(stepErr, fmt.Errorf("NB rows after the scenario: %w", rowsErr))
	}
	ex.verdict(stepErr)
	if res.Status != reports.Pass {
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
		rs := reports.Step{Index: i, Line: st.Line, Kind: st.Kind(), Summary: summary(st), Started: ex.r.now()}
		if first != nil {
			rs.Status, rs.Finished = reports.NotRun, rs.Started
			ex.res.Steps = append(ex.res.Steps, rs)
			continue
		}
		ex.r.Progress.StepStart(ex.res.ID(), rs, n)
		ex.measures, ex.detail = nil, nil
		err := ex.step(ctx, i, st)
		rs.Finished, rs.Status, rs.Measures, rs.Detail = ex.r.now(), reports.Pass, ex.measures, ex.detail
		if err != nil {
			first = fmt.Errorf("steps[%d] (line %d): %w", i, st.Line, err)
			rs.Status, rs.Error = reports.Fail, err.Error()
		}
		ex.r.Progress.StepEnd(ex.res.ID(), rs)
		ex.res.Steps = append(ex.res.Steps, rs)
	}
	return first
}

// verdict sets the scenario status from the step error, the flows and the
// invariant violations, and lists the failed properties.
func (ex *execution) verdict(stepErr error) {
	res := ex.res
	res.Status = reports.Pass
	var cf *checkFailure
	if stepErr != nil && !errors.As(stepErr, &cf) {
		res.Status, res.Error = reports.Error, stepErr.Error()
		return
	}
	res.FailedProperties = failedProperties(res, cf)
	switch {
	case stepErr != nil:
		res.Status, res.Error = reports.Fail, stepErr.Error()
		return
	case len(res.Violations) > 0:
		res.Status, res.Error = reports.Fail, fmt.Sprintf("NB invariant violated %d times, first: %s", len(res.Violations), res.Violations[0])
		return
	}
	for _, f := range res.Flows {
		if !f.Pass() {
			res.Status, res.Error = reports.Fail, fmt.Sprintf("flow %s/%s failed its expectations", f.Name, f.Family)
			return
		}
	}
	if len(res.FailedProperties) > 0 {
		res.Status, res.Error = reports.Fail, "failed: "+strings.Join(res.FailedProperties, ", ")
	}
}

func (ex *execution) step(ctx context.Context, i int, st *scenarios.Step) error {
	switch st.Kind() {
	case "apply", "edit":
		return ex.eachObject(st, func(m *scenarios.Manifest) error { return ex.env.Apply(ctx, m) }, ex.world.apply, "apply")
	case "delete":
		return ex.eachObject(st, func(m *scenarios.Manifest) error { return ex.env.Delete(ctx, m) }, ex.world.remove, "delete")
	case "label":
		return ex.label(ctx, st.Label)
	case "startVM":
		if st.Probe != nil {
			return ex.startVMsProbed(ctx, st) // appear.go
		}
		return ex.startVMs(ctx, st.StartVM)
	case "spoof", "churn", "ovnBaseline":
		return ex.adversarial(ctx, st) // adversarial_steps.go
	case "migrate", "restartLauncher", "guestIP", "restartDaemon":
		return ex.lifecycle(ctx, st)
	case "restartController", "upgrade":
		return ex.controllerStep(ctx, st)
	case "start":
		return ex.start(ctx, i, st.Start)
	case "stop":
		return ex.stop(ctx, st.Stop)
	case "wait":
		return ex.wait(ctx, i, st.Wait)
	case "expect":
		return ex.expect(ctx, i, st.Expect)
	}
	return fmt.Errorf("step kind %q is not executable", st.Kind())
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

func (ex *execution) label(ctx context.Context, l *scenarios.LabelChange) error {
	vm := ex.sc.VM(l.VM)
	if vm == nil {
		return fmt.Errorf("label: unknown VM %q", l.VM)
	}
	if err := ex.env.SetLabels(ctx, vm, l.Set, l.Remove); err != nil {
		return fmt.Errorf("label VM %s: %w", vm.Name, err)
	}
	ex.world.relabel(vm.Name, l.Set, l.Remove)
	return nil
}

// summary describes a step for the report and the terminal.
func summary(st *scenarios.Step) string {
	var s string
	switch st.Kind() {
	case "apply", "delete", "edit":
		keys := make([]string, len(st.Objects))
		for i, m := range st.Objects {
			keys[i] = m.Key()
			if m.Revision > 0 {
				keys[i] += fmt.Sprintf(" (revision %d)", m.Revision)
			}
		}
		s = strings.Join(keys, ", ")
	case "label":
		s = fmt.Sprintf("VM %s set %v", st.Label.VM, sortedPairs(st.Label.Set))
		if len(st.Label.Remove) > 0 {
			s += fmt.Sprintf(" remove %v", st.Label.Remove)
		}
	case "startVM":
		s = "VMs " + strings.Join(st.StartVM, ", ")
	case "migrate":
		s = fmt.Sprintf("VM %s to node %d (%s)", st.Migrate.VM, st.Migrate.To, st.Migrate.Mode)
	case "restartLauncher":
		s = "VMs " + strings.Join(st.RestartLauncher, ", ")
	case "guestIP":
		s = fmt.Sprintf("VM %s guest IPv4 %s", st.GuestIP.VM, st.GuestIP.V4)
	case "restartDaemon":
		r := st.RestartDaemon
		s = fmt.Sprintf("%s %s on node %d, probe from VM %s", r.Mode, r.Daemon, r.Node, r.VM)
	case "restartController", "upgrade":
		s = controllerSummary(st)
	case "spoof", "churn", "ovnBaseline":
		s = adversarialSummary(st)
	case "start", "stop":
		s = strings.Join(append(st.Start, st.Stop...), ", ")
	case "wait":
		s = describeCheck(st.Wait) + fmt.Sprintf(" within %s", st.Wait.Timeout)
	case "expect":
		s = describeCheck(st.Expect)
	}
	if st.Name != "" {
		return st.Name + " — " + s
	}
	return s
}

func describeCheck(c *scenarios.Check) string {
	var parts []string
	for _, o := range c.Objects {
		parts = append(parts, o.Object.Key())
	}
	if c.NoOwnedRows {
		parts = append(parts, "no NetworkQoS-owned rows")
	}
	return strings.Join(parts, ", ")
}

func sortedPairs(m map[string]string) []string {
	var out []string
	for _, k := range slices.Sorted(maps.Keys(m)) {
		out = append(out, k+"="+m[k])
	}
	return out
}
