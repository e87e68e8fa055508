package harness

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/nqos/nqos/harness/results"
	"github.com/nqos/nqos/harness/world"
	"github.com/nqos/nqos/scenarios"
)

// IP-family modes of a run.
const (
	ModeV4   = "v4"
	ModeV6   = "v6"
	ModeDual = "dual"
)

// Runner executes scenarios and builds the run's report model.
type Runner struct {
	Prov Provisioner
	// Backend names the environment in the results ("embedded", "kind").
	Backend string
	// Topology names the OVN control-plane layout in the results
	// ("central", "interconnect"; default: what the scenarios recorded).
	Topology string
	Dir      string    // output directory; each scenario gets a subdirectory
	Mode     string    // v4, v6 or dual
	IPAM     string    // ipamless, ovnk, dhcp or all ("" is all)
	Progress *Progress // may be nil
	// PollInterval paces wait steps; default 100ms.
	PollInterval time.Duration
	// JoinTimeout bounds how long a startVM step waits for the VM's port
	// to join its port groups; default scenarios.DefaultWaitTimeout.
	JoinTimeout time.Duration
	// Teardowns, when set, holds the teardown of the environment up, for
	// a forced exit.
	Teardowns *Teardowns
}

// Families maps an IP-family mode to the families a scenario runs in.
func Families(mode string) ([]scenarios.Family, error) {
	switch mode {
	case ModeV4, "":
		return []scenarios.Family{scenarios.V4}, nil
	case ModeV6:
		return []scenarios.Family{scenarios.V6}, nil
	case ModeDual:
		return []scenarios.Family{scenarios.V4, scenarios.V6}, nil
	}
	return nil, fmt.Errorf("invalid IP family mode %q (want v4, v6 or dual)", mode)
}

// IPAM-filter modes of a run and the topology IPAM they select.
const (
	IPAMAll      = "all"
	IPAMIpamless = "ipamless"
	IPAMOVNK     = "ovnk"
	IPAMDHCP     = "dhcp"
)

// TopologyIPAM maps an IPAM filter mode to the scenario topology's ipam
// value it selects; "" for all.
func TopologyIPAM(mode string) (string, error) {
	switch mode {
	case IPAMAll, "":
		return "", nil
	case IPAMIpamless:
		return scenarios.IPAMNone, nil
	case IPAMOVNK:
		return scenarios.IPAMSubnets, nil
	case IPAMDHCP:
		return scenarios.IPAMDHCP, nil
	}
	return "", fmt.Errorf("invalid IPAM mode %q (want ipamless, ovnk, dhcp or all)", mode)
}

// scenarioFamilies are the run's families the scenario runs in: a
// dual-stack run runs an IPv4-only scenario in IPv4.
func scenarioFamilies(sc *scenarios.Scenario, fams []scenarios.Family) []scenarios.Family {
	var out []scenarios.Family
	for _, f := range fams {
		if slices.Contains(sc.Families, f) {
			out = append(out, f)
		}
	}
	return out
}

// skipReason says why the run skips the scenario ("" runs it).
func skipReason(sc *scenarios.Scenario, fams []scenarios.Family, ipam string) string {
	if len(scenarioFamilies(sc, fams)) == 0 {
		return fmt.Sprintf("scenario runs in %v only", sc.Families)
	}
	if ipam == "" {
		return ""
	}
	var have []string
	for _, n := range sc.Topology.Networks {
		if n.IPAM == ipam {
			return ""
		}
		have = append(have, n.IPAM)
	}
	return fmt.Sprintf("no network with ipam %s (scenario has %v)", ipam, have)
}

// Run executes the scenarios one after the other.
func (r *Runner) Run(ctx context.Context, runID string, scs []*scenarios.Scenario) (*results.Run, error) {
	fams, ferr := Families(r.Mode)
	ipam, ierr := TopologyIPAM(r.IPAM)
	if err := cmp.Or(ferr, ierr); err != nil {
		return nil, err
	}
	host, _ := os.Hostname()
	run := &results.Run{ID: runID, Started: time.Now(), Host: host, IPFamily: r.Mode, Backend: r.Backend, Topology: r.Topology}
	for i, sc := range scs {
		res := r.scenario(ctx, sc, fams, ipam, i, len(scs))
		if run.OVNVersion == "" {
			run.OVNVersion = res.OVNVersion
		}
		if run.Topology == "" {
			run.Topology = res.Topology
		}
		run.Scenarios = append(run.Scenarios, res)
	}
	run.Finished = time.Now()
	return run, nil
}

func newResult(sc *scenarios.Scenario, fams []scenarios.Family) results.Scenario {
	res := results.Scenario{Name: sc.Name, Title: sc.Title, File: sc.File, Notes: sc.Notes, Description: sc.Description}
	for _, f := range fams {
		res.Families = append(res.Families, string(f))
	}
	return res
}

// scenario runs one scenario in a fresh environment; after the run was
// interrupted it starts none (nothing is provisioned with a cancelled
// context).
func (r *Runner) scenario(ctx context.Context, sc *scenarios.Scenario, fams []scenarios.Family, ipam string, i, n int) (res results.Scenario) {
	why := skipReason(sc, fams, ipam)
	interrupted := ctx.Err() != nil
	if why == "" || interrupted {
		fams = scenarioFamilies(sc, fams)
	}
	res = newResult(sc, fams)
	res.Started = time.Now()
	r.Progress.ScenarioStart(res.ID(), sc.Title, i, n)
	defer func() {
		res.Finished = time.Now()
		r.Progress.ScenarioEnd(res)
	}()
	if interrupted {
		res.Status, res.Error = results.Interrupted, "the run was interrupted before this scenario started"
		return res
	}
	if why != "" {
		res.Status, res.SkipReason = results.Skipped, why
		return res
	}
	if step, ns := Unsupported(sc, r.Backend, r.Prov.Lacks()); ns != nil {
		res.Status, res.Error, res.Steps = results.Unsupported, ns.Error(), r.unsupportedSteps(sc, step, ns)
		return res
	}
	dir := filepath.Join(r.Dir, sc.Name+"-"+r.modeName())
	if err := os.MkdirAll(dir, 0o755); err != nil {
		res.Status, res.Error = results.Error, err.Error()
		return res
	}
	env, err := r.Prov.Provision(ctx, sc, fams, dir)
	if err != nil {
		res.Status, res.Error = results.Error, fmt.Sprintf("provision testbed for %s: %v", sc.Name, err)
		var ns *NotSupportedError
		switch {
		case errors.As(err, &ns):
			res.Status = results.Unsupported
		case ctx.Err() != nil:
			res.Status = results.Interrupted
		}
		return res
	}
	teardown, remove := r.Teardowns.Add(env.Close)
	defer func() {
		defer remove()
		reportTeardown(&res, sc.Name, teardown())
	}()
	ex := &execution{r: r, sc: sc, env: env, fams: fams, dir: dir, res: &res, running: map[string]*group{}, world: world.New(sc), kinds: stepKinds()}
	ex.run(ctx)
	if ctx.Err() != nil && res.Status != results.Pass {
		res.Status, res.Error = results.Interrupted, joinError("interrupted", res.Error)
	}
	return res
}

// reportTeardown records a teardown error in the scenario's result
// whatever its status: a passed scenario becomes an error, any other
// keeps its status and its error gains the teardown's.
func reportTeardown(res *results.Scenario, name string, err error) {
	if err == nil {
		return
	}
	msg := fmt.Sprintf("tear down testbed of %s: %v", name, err)
	if res.Status == results.Pass {
		res.Status = results.Error
	}
	res.Error = joinError(res.Error, msg)
}

func joinError(a, b string) string {
	switch {
	case a == "":
		return b
	case b == "":
		return a
	}
	return a + "; " + b
}

// unsupportedSteps are the steps of a scenario the backend cannot run,
// decided before the boot: the step it cannot run unsupported, the
// others not run.
func (r *Runner) unsupportedSteps(sc *scenarios.Scenario, step int, ns *NotSupportedError) []results.Step {
	now := time.Now()
	out := make([]results.Step, len(sc.Steps))
	for i := range sc.Steps {
		st := &sc.Steps[i]
		out[i] = results.Step{Index: i, Line: st.Line, Kind: st.Kind(), Summary: st.Describe(), Started: now, Finished: now, Status: results.NotRun}
		if i == step {
			out[i].Status, out[i].Error = results.Unsupported, ns.Error()
		}
	}
	return out
}

func (r *Runner) modeName() string { return cmp.Or(r.Mode, ModeV4) }

// Teardowns are the teardowns of the environments still up, so that a
// forced exit (a second Ctrl-C) can run them before the process ends.
// Each teardown runs once, whoever calls it first; a second caller waits
// for it and gets its error. The zero value is ready to use.
type Teardowns struct {
	mu   sync.Mutex
	next int
	fns  map[int]func() error
}

// Add registers close (wrapped so that it runs once) and returns the
// wrapped teardown and a function removing it from the set.
func (t *Teardowns) Add(close func() error) (teardown func() error, remove func()) {
	once := sync.OnceValue(close)
	if t == nil {
		return once, func() {}
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.fns == nil {
		t.fns = map[int]func() error{}
	}
	id := t.next
	t.next++
	t.fns[id] = once
	return once, func() {
		t.mu.Lock()
		defer t.mu.Unlock()
		delete(t.fns, id)
	}
}

// Run runs every registered teardown (each at most once, also when the
// runner is running it already) and joins their errors.
func (t *Teardowns) Run() error {
	if t == nil {
		return nil
	}
	t.mu.Lock()
	fns := make([]func() error, 0, len(t.fns))
	for _, id := range slices.Sorted(maps.Keys(t.fns)) {
		fns = append(fns, t.fns[id])
	}
	t.mu.Unlock()
	var errs []error
	for _, fn := range fns {
		errs = append(errs, fn())
	}
	return errors.Join(errs...)
}

// Len is how many teardowns are registered.
func (t *Teardowns) Len() int {
	if t == nil {
		return 0
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.fns)
}
