package nightly

import (
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
)

// laneName is the shape of a lane name (it becomes a job and artifact name).
var laneName = regexp.MustCompile(`^[a-z0-9][a-z0-9-]*$`)

// The embedded step must pass these matrix values to make.
var embeddedStepRefs = []string{"make e2e-localnet", "${{ matrix.scenarios }}", "${{ matrix.ip-family }}", "${{ matrix.ipam }}", "OVN=${{ matrix.ovn }}", "TOPOLOGY=${{ matrix.topology }}"}

// LanePlan is what one lane runs: the scenario files it selects.
type LanePlan struct {
	Lane      Lane
	Scenarios []string // file base names, sorted
}

// Plan resolves each lane's scenarios field against scs: "all" selects
// every scenario the lane's family and IPAM mode support, a list selects
// the named files that exist (Validate reports the rest).
func (m Matrix) Plan(scs []Scenario) []LanePlan {
	byFile := map[string]Scenario{}
	for _, s := range scs {
		byFile[s.File] = s
	}
	plans := make([]LanePlan, 0, len(m.Lanes))
	for _, l := range m.Lanes {
		p := LanePlan{Lane: l, Scenarios: []string{}}
		if l.Scenarios == AllScenarios {
			for _, s := range scs {
				if ok, _ := selects(l, s); ok {
					p.Scenarios = append(p.Scenarios, s.File)
				}
			}
		} else {
			for _, n := range l.Names() {
				if _, ok := byFile[n]; ok && !slices.Contains(p.Scenarios, n) {
					p.Scenarios = append(p.Scenarios, n)
				}
			}
			slices.Sort(p.Scenarios)
		}
		plans = append(plans, p)
	}
	return plans
}

// laneFamilies are the IP families a lane runs every flow in.
func laneFamilies(family string) []string {
	if family == FamilyDual {
		return []string{FamilyV4, FamilyV6}
	}
	return []string{family}
}

// selects reports whether scenario s runs in lane l, and why not.
func selects(l Lane, s Scenario) (bool, string) {
	for _, f := range laneFamilies(l.IPFamily) {
		if !slices.Contains(s.Families, f) {
			return false, fmt.Sprintf("runs in %v only (ipFamilies)", s.Families)
		}
	}
	if len(s.IPAM) > 0 && !slices.Contains(s.IPAM, l.IPAM) {
		return false, fmt.Sprintf("has no %s network (its networks are %v)", l.IPAM, s.IPAM)
	}
	return true, ""
}

// Validate checks the matrix against the scenario files in scenarioDir
// and returns every problem found, each naming the file, lane and field.
func (m Matrix) Validate(scenarioDir string) error {
	scs, err := LoadScenarios(scenarioDir)
	if err != nil {
		return fmt.Errorf("nightly matrix %s: %w", m.Path, err)
	}
	v := &validator{m: m, byFile: map[string]Scenario{}}
	for _, s := range scs {
		v.byFile[s.File] = s
	}
	v.workflow()
	plans := m.Plan(scs)
	seen := map[string]string{}
	for i, p := range plans {
		v.lane(i, p, seen)
	}
	v.coverage(scs, plans)
	return errors.Join(v.problems...)
}

type validator struct {
	m        Matrix
	byFile   map[string]Scenario
	problems []error
}

func (v *validator) addf(format string, args ...any) {
	v.problems = append(v.problems, fmt.Errorf("nightly matrix %s: "+format, append([]any{v.m.Path}, args...)...))
}

// workflow checks the triggers and the step that runs the lanes.
func (v *validator) workflow() {
	on := v.m.Workflow.On
	if len(on.Schedule) == 0 {
		v.addf("field on.schedule: want at least one cron entry")
	}
	for i, c := range on.Schedule {
		if len(strings.Fields(c.Cron)) != 5 {
			v.addf("field on.schedule[%d].cron: %q is not a five-field cron expression", i, c.Cron)
		}
	}
	if on.WorkflowDispatch.Kind == 0 {
		v.addf("field on.workflow_dispatch: missing (the matrix must be runnable by hand)")
	}
	for _, st := range v.m.Workflow.Jobs[v.m.Job].Steps {
		if strings.Contains(st.Run, embeddedStepRefs[0]) {
			for _, ref := range embeddedStepRefs[1:] {
				if !strings.Contains(st.Run, ref) {
					v.addf("job %s: step %q: run does not pass %s", v.m.Job, st.Name, ref)
				}
			}
			return
		}
	}
	v.addf("job %s: no step runs %q", v.m.Job, embeddedStepRefs[0])
}

// lane checks one lane's fields and scenario names.
func (v *validator) lane(i int, p LanePlan, seen map[string]string) {
	l := p.Lane
	where := fmt.Sprintf("lane %d (%q)", i, l.Name)
	switch {
	case l.Name == "":
		v.addf("%s: field lane is empty", where)
	case !laneName.MatchString(l.Name):
		v.addf("%s: field lane: want lower-case letters, digits and '-'", where)
	case seen["name:"+l.Name] != "":
		v.addf("%s: field lane: duplicate of %s", where, seen["name:"+l.Name])
	}
	seen["name:"+l.Name] = where
	valid := v.oneOf(where, "ip-family", l.IPFamily, AllFamilies())
	valid = v.oneOf(where, "ipam", l.IPAM, AllIPAMModes()) && valid
	v.oneOf(where, "backend", l.Backend, AllBackends())
	v.ovn(where, l)
	v.topology(where, l)
	if l.RunsHere == nil {
		v.addf("%s: field runs-here is missing (true or false)", where)
	}
	if !valid {
		return // which scenarios fit is meaningless with an unknown family or mode
	}
	v.scenarioNames(where, l)
	if l.Runs() && len(p.Scenarios) == 0 {
		v.addf("%s: field scenarios: selects no scenario, yet runs-here is true", where)
	}
	cfg := fmt.Sprintf("config:%s/%s/%s/%s/%s/%s", l.IPFamily, l.IPAM, l.Backend, l.OVN, l.Topology, strings.Join(p.Scenarios, " "))
	if prev := seen[cfg]; prev != "" && len(p.Scenarios) > 0 {
		v.addf("%s: runs the same family, IPAM, backend, OVN, topology and scenarios as %s", where, prev)
	}
	seen[cfg] = where
}

// ovn checks the ovn field: an embedded lane names one of the OVN
// versions, a kind lane the one its node image holds.
func (v *validator) ovn(where string, l Lane) {
	switch {
	case l.Backend == BackendKind && l.OVN != KindOVN:
		v.addf("%s: field ovn: %q: a kind lane runs the OVN of the KinD node image, %q", where, l.OVN, KindOVN)
	case l.Backend == BackendEmbedded && l.OVN == "":
		v.addf("%s: field ovn is missing (the OVN version the testbed runs: one of %v)", where, AllOVNVersions())
	case l.Backend == BackendEmbedded:
		v.oneOf(where, "ovn", l.OVN, AllOVNVersions())
	}
}

// topology checks the topology field: an embedded lane runs either
// layout, a kind lane its cluster's central one.
func (v *validator) topology(where string, l Lane) {
	switch {
	case l.Topology == "":
		v.addf("%s: field topology is missing (one of %v)", where, AllTopologies())
	case l.Backend == BackendKind && l.Topology != TopologyCentral:
		v.addf("%s: field topology: %q: a kind lane runs its cluster's one NB, %q", where, l.Topology, TopologyCentral)
	default:
		v.oneOf(where, "topology", l.Topology, AllTopologies())
	}
}

func (v *validator) oneOf(where, field, value string, allowed []string) bool {
	if !slices.Contains(allowed, value) {
		v.addf("%s: field %s: %q is not one of %v", where, field, value, allowed)
		return false
	}
	return true
}

// scenarioNames checks the scenarios field: "all", or existing files that
// support the lane's family and IPAM mode, each once.
func (v *validator) scenarioNames(where string, l Lane) {
	names := l.Names()
	switch {
	case len(names) == 0:
		v.addf("%s: field scenarios is empty (scenario file names or %q)", where, AllScenarios)
		return
	case l.Scenarios == AllScenarios:
		return
	}
	for j, n := range names {
		s, ok := v.byFile[n]
		switch {
		case n == AllScenarios:
			v.addf("%s: field scenarios: %q must stand alone", where, AllScenarios)
		case slices.Contains(names[:j], n):
			v.addf("%s: field scenarios: %s is listed twice", where, n)
		case !ok:
			v.addf("%s: field scenarios: no scenario file %s.yaml (known: %s)", where, n, strings.Join(v.files(), " "))
		default:
			if fits, why := selects(l, s); !fits {
				v.addf("%s: field scenarios: %s cannot run in a %s/%s lane: it %s", where, n, l.IPFamily, l.IPAM, why)
			}
		}
	}
}

func (v *validator) files() []string {
	out := make([]string, 0, len(v.byFile))
	for f := range v.byFile {
		out = append(out, f)
	}
	slices.Sort(out)
	return out
}

// coverage checks that every scenario runs in an embedded interconnect
// lane of every OVN version, that every OVN version has an embedded
// interconnect lane and every topology an embedded lane that runs here,
// and that every family and IPAM mode has a lane.
func (v *validator) coverage(scs []Scenario, plans []LanePlan) {
	embedded := map[string]bool{} // "<ovn> <scenario>" of interconnect lanes
	here := map[string]bool{}     // ovn versions with a runs-here interconnect lane
	topologies := map[string]bool{}
	families, modes := map[string]bool{}, map[string]bool{}
	for _, p := range plans {
		families[p.Lane.IPFamily], modes[p.Lane.IPAM] = true, true
		if p.Lane.Backend != BackendEmbedded {
			continue
		}
		topologies[p.Lane.Topology] = topologies[p.Lane.Topology] || p.Lane.Runs() && len(p.Scenarios) > 0
		if p.Lane.Topology != TopologyInterconnect {
			continue
		}
		here[p.Lane.OVN] = here[p.Lane.OVN] || p.Lane.Runs() && len(p.Scenarios) > 0
		for _, s := range p.Scenarios {
			embedded[p.Lane.OVN+" "+s] = true
		}
	}
	for _, o := range AllOVNVersions() {
		for _, s := range scs {
			if !embedded[o+" "+s.File] {
				v.addf("scenario %s (families %v, IPAM %v) is in no embedded interconnect lane of OVN %s", s.File, s.Families, s.IPAM, o)
			}
		}
		if !here[o] {
			v.addf("OVN %s has no embedded interconnect lane that runs here", o)
		}
	}
	for _, t := range AllTopologies() {
		if !topologies[t] {
			v.addf("topology %s has no embedded lane that runs here", t)
		}
	}
	for _, f := range AllFamilies() {
		if !families[f] {
			v.addf("no lane has ip-family %s", f)
		}
	}
	for _, m := range AllIPAMModes() {
		if !modes[m] {
			v.addf("no lane has ipam %s", m)
		}
	}
}
