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

// builtin is in adversarial_test.go.

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
