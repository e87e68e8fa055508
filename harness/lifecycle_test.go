package harness

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/nqos/nqos/harness/lifeprobe"
	"github.com/nqos/nqos/harness/verdict"

	"github.com/nqos/nqos/harness/results"
	"github.com/nqos/nqos/scenarios"
)

// TestStartVMMeasuresJoin: the startVM step records the port-up and
// port-group join times and the port groups the intent puts the VM in.
func TestStartVMMeasuresJoin(t *testing.T) {
	sim := newSim(builtin(t, "vm-after-policy"), "23.03.1")
	res, _ := runOne(t, sim.sc, &simProv{env: sim}, ModeV4)
	st := stepOf(t, res, "startVM", 0)
	if st.Status != results.Pass {
		t.Fatalf("startVM step %s: %s", st.Status, st.Error)
	}
	if len(st.Measures) != 2 {
		t.Fatalf("measures %+v, want port up and port-group join", st.Measures)
	}
	join := st.Measures[1]
	if !strings.Contains(join.Name, "prod-late") || join.Note != "1 port groups" || join.Duration < 0 || join.Duration > 5*time.Second {
		t.Errorf("join measure %+v, want prod-late in 1 port group within 5s", join)
	}
	if !strings.Contains(st.Summary, "prod-late") {
		t.Errorf("summary %q does not name the VM", st.Summary)
	}
	if !slices.Contains(sim.calls, "startVM prod-late") {
		t.Errorf("calls %v: StartVM not called", sim.calls)
	}
}

// TestStartVMNeverJoins: a port that never joins its port group fails the
// step as nb-rows after the join timeout, and the later steps do not run.
func TestStartVMNeverJoins(t *testing.T) {
	sim := newSim(builtin(t, "vm-after-policy"), "23.03.1")
	sim.noJoin = true
	r := &Runner{Prov: &simProv{env: sim}, Dir: t.TempDir(), Mode: ModeV4, PollInterval: time.Millisecond, JoinTimeout: 200 * time.Millisecond}
	run, err := r.Run(t.Context(), "test", []*scenarios.Scenario{sim.sc})
	if err != nil {
		t.Fatal(err)
	}
	res := run.Scenarios[0]
	st := stepOf(t, res, "startVM", 0)
	if st.Status != results.Fail || !strings.Contains(st.Error, "is not in port groups") {
		t.Errorf("startVM step %s %q, want a failure naming the missing port groups", st.Status, st.Error)
	}
	if res.Status != results.Fail || len(res.FailedProperties) != 1 || res.FailedProperties[0] != verdict.Rows {
		t.Errorf("scenario %s properties %v, want fail with %s", res.Status, res.FailedProperties, verdict.Rows)
	}
	if last := res.Steps[len(res.Steps)-1]; last.Status != results.NotRun {
		t.Errorf("last step %s, want not run", last.Status)
	}
}

// TestLifecycleProbeJudged: a lifecycle step fails on each bound its
// probe exceeds, naming the property; within bounds it passes and keeps
// the measures and detail.
func TestLifecycleProbeJudged(t *testing.T) {
	cases := []struct {
		scenario string
		life     lifeprobe.Outcome
		props    []verdict.Property
	}{
		{"vm-lifecycle", lifeprobe.Outcome{Packets: 500, Lost: map[string]int{"in": 250, "out": 250}}, nil},
		{"vm-lifecycle", lifeprobe.Outcome{Packets: 500, Unmarked: 3, Lost: map[string]int{"in": 0, "out": 0}}, []verdict.Property{verdict.Unmarked}},
		{"vm-lifecycle", lifeprobe.Outcome{Packets: 500, Lost: map[string]int{"in": 251, "out": 0}}, []verdict.Property{verdict.Loss}},
		{"vm-lifecycle", lifeprobe.Outcome{Packets: 0}, []verdict.Property{verdict.Unmarked}},
		{"daemon-restarts", lifeprobe.Outcome{Packets: 500, Gap: 750 * time.Millisecond}, nil},
		{"daemon-restarts", lifeprobe.Outcome{Packets: 500, Gap: 751 * time.Millisecond}, []verdict.Property{verdict.Gap}},
	}
	for _, c := range cases {
		sim := newSim(builtin(t, c.scenario), "23.03.1")
		life := c.life
		life.Measures = []results.Measure{{Name: "probe", Count: life.Packets, Unit: "packets"}}
		life.Detail = "detail"
		sim.life = &life
		res, _ := runOne(t, sim.sc, &simProv{env: sim}, ModeV4)
		if !slices.Equal(res.FailedProperties, c.props) {
			t.Errorf("%s with %+v: failed %v (%s), want %v", c.scenario, c.life, res.FailedProperties, res.Error, c.props)
		}
		st := res.Steps[2] // the first lifecycle step of both scenarios
		if len(st.Measures) != 1 || st.Detail == nil {
			t.Errorf("%s step %s: measures %v detail %v, want the operation's", c.scenario, st.Kind, st.Measures, st.Detail)
		}
	}
}
