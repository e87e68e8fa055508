package harness

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/nqos/nqos/harness/lifeprobe"
	"github.com/nqos/nqos/harness/results"
	"github.com/nqos/nqos/harness/verdict"
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

// TestControllerRestartSequence: each restartController step restarts
// once, its burst's applies and deletes run inside the restart (after it
// began) and are recorded in the world, and the summaries name the kill
// point.
func TestControllerRestartSequence(t *testing.T) {
	sim := newSim(builtin(t, "controller-restart"), "23.03.1")
	sim.measure = passingMeasure
	res, _ := runOne(t, sim.sc, &simProv{env: sim}, ModeV4)
	if res.Status != results.Pass {
		t.Fatalf("status %s: %s", res.Status, res.Error)
	}
	calls := strings.Join(sim.calls, "\n")
	for _, want := range []string{
		"restartController graceful prod-1\nrestartController kill9 prod-1\nstart [during-kill/v4]\nrestartController kill9 prod-1\nfinish",
		"restartController kill9 prod-1\napply NetworkQoS vms/burst-a\napply NetworkQoS vms/burst-b\napply NetworkQoS vms/burst-c",
		"restartController kill9 prod-1\ndelete NetworkQoS vms/burst-a\ndelete NetworkQoS vms/burst-b\ndelete NetworkQoS vms/burst-c",
		"restartController graceful prod-1\napply NetworkQoS vms/burst-a\napply NetworkQoS vms/burst-b",
	} {
		if !strings.Contains(calls, want) {
			t.Errorf("calls lack\n%s\nin\n%s", want, calls)
		}
	}
	var summaries []string
	for _, st := range res.Steps {
		if st.Kind == "restartController" {
			summaries = append(summaries, st.Summary)
		}
	}
	if len(summaries) != 6 || !strings.Contains(summaries[3], "right after NB transaction 2") || !strings.Contains(summaries[3], "apply NetworkQoS vms/burst-c") {
		t.Errorf("restartController summaries %q", summaries)
	}
}

// TestUpgradeStartsController: before the upgrade step the controller of
// a bootless scenario writes nothing; the step starts it.
func TestUpgradeStartsController(t *testing.T) {
	sim := newSim(builtin(t, "upgrade"), "23.03.1")
	sim.measure = passingMeasure
	if rows := sim.rows(); len(rows.QoS)+len(rows.PortGroups) != 0 {
		t.Fatalf("bootless sim has rows before any step: %+v", rows)
	}
	res, _ := runOne(t, sim.sc, &simProv{env: sim}, ModeV4)
	if res.Status != results.Pass {
		t.Fatalf("status %s: %s", res.Status, res.Error)
	}
	if !slices.Contains(sim.calls, "upgrade prod-1") || len(res.NBAfter.QoS) != 2 {
		t.Errorf("calls %v, %d QoS rows after; want the upgrade and 2 rows", sim.calls, len(res.NBAfter.QoS))
	}
}

// TestControllerStepJudged: a controller step fails on each bound its
// result exceeds, with the property named, and keeps its measures.
func TestControllerStepJudged(t *testing.T) {
	ok := lifeprobe.Outcome{Packets: 500, Lost: map[string]int{"out": 375}, Gap: 750 * time.Millisecond}
	cases := []struct {
		scenario string
		res      ControllerResult
		props    []verdict.Property
	}{
		{"controller-restart", ControllerResult{Outcome: ok}, nil},
		{"controller-restart", ControllerResult{Outcome: lifeprobe.Outcome{Packets: 500, Unmarked: 1}}, []verdict.Property{verdict.Unmarked}},
		{"controller-restart", ControllerResult{Outcome: lifeprobe.Outcome{Packets: 500, Gap: 751 * time.Millisecond}}, []verdict.Property{verdict.Gap}},
		{"controller-restart", ControllerResult{Outcome: lifeprobe.Outcome{Packets: 500, Lost: map[string]int{"out": 376}}}, []verdict.Property{verdict.Loss}},
		{"controller-restart", ControllerResult{Outcome: ok, Divergence: Divergence{Extra: []string{`Port_Group {"name":"orphan"}`}}}, []verdict.Property{verdict.Rows}},
		{"controller-restart", ControllerResult{Outcome: ok, Divergence: Divergence{Problems: []string{"QoS x: dangling"}}}, []verdict.Property{verdict.Rows}},
		{"controller-restart", ControllerResult{Outcome: ok, TxWhileDown: 1}, []verdict.Property{verdict.Writers}}, // the first restart is graceful
		{"upgrade", ControllerResult{Outcome: ok}, nil},
		{"upgrade", ControllerResult{Outcome: ok, OrderErrors: []string{"set deleted first"}}, []verdict.Property{verdict.Migration}},
		{"upgrade", ControllerResult{Outcome: lifeprobe.Outcome{Packets: 0}}, []verdict.Property{verdict.Unmarked}},
	}
	for _, c := range cases {
		sim := newSim(builtin(t, c.scenario), "23.03.1")
		sim.measure = passingMeasure
		r := c.res
		r.Measures = []results.Measure{{Name: "probe", Count: 1, Unit: "packets"}}
		r.Detail = "detail"
		sim.ctrl.result = &r
		res, _ := runOne(t, sim.sc, &simProv{env: sim}, ModeV4)
		if !slices.Equal(res.FailedProperties, c.props) {
			t.Errorf("%s with %+v: failed %v (%s), want %v", c.scenario, c.res, res.FailedProperties, res.Error, c.props)
		}
		i := slices.IndexFunc(res.Steps, func(s results.Step) bool { return s.Kind == "restartController" || s.Kind == "upgrade" })
		if st := res.Steps[i]; len(st.Measures) != 1 || st.Detail == nil {
			t.Errorf("%s step %s: measures %v detail %v, want the operation's", c.scenario, st.Kind, st.Measures, st.Detail)
		}
	}
}

// TestKillInFlightAllowance: after SIGKILL up to one transaction per
// reconcile worker may still commit; after a graceful stop none.
func TestKillInFlightAllowance(t *testing.T) {
	probe := &scenarios.Probe{MaxGap: time.Second}
	base := lifeprobe.Outcome{Packets: 1}
	for _, c := range []struct {
		mode string
		down int
		fail bool
	}{
		{scenarios.ControllerKill9, killInFlight, false}, {scenarios.ControllerKill9, killInFlight + 1, true},
		{scenarios.ControllerGraceful, 0, false}, {scenarios.ControllerGraceful, 1, true},
	} {
		st := &scenarios.Step{ControllerSteps: scenarios.ControllerSteps{RestartController: &scenarios.RestartController{Mode: c.mode}}, Probe: probe}
		m := judgeController("vm", st, ControllerResult{Outcome: base, TxWhileDown: c.down})
		if got := len(m) > 0; got != c.fail {
			t.Errorf("%s with %d transactions while down: mismatches %v, want failure %v", c.mode, c.down, m, c.fail)
		}
	}
}
