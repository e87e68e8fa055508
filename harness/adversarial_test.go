package harness

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/nqos/nqos/harness/lifeprobe"
	"github.com/nqos/nqos/harness/marks"
	"github.com/nqos/nqos/harness/verdict"

	"github.com/nqos/nqos/harness/results"
	"github.com/nqos/nqos/scenarios"
)

func builtin(t *testing.T, name string) *scenarios.Scenario {
	t.Helper()
	scs, err := scenarios.Resolve([]string{name})
	if err != nil {
		t.Fatal(err)
	}
	return scs[0]
}

func stepOf(t *testing.T, res results.Scenario, kind string, nth int) results.Step {
	t.Helper()
	for _, st := range res.Steps {
		if st.Kind == kind {
			if nth == 0 {
				return st
			}
			nth--
		}
	}
	t.Fatalf("no %s step in %+v", kind, res.Steps)
	return results.Step{}
}

// TestSpoofJudged: the spoof step fails on each way the datapath could
// betray the port-based match, naming the property, and passes (with
// the per-flow figures) when the spoofer keeps its class.
func TestSpoofJudged(t *testing.T) {
	mutate := func(name string, f func(*lifeprobe.SpoofedFlow)) func(*scenarios.Spoof) lifeprobe.Spoofing {
		return func(sp *scenarios.Spoof) lifeprobe.Spoofing {
			r := passingSpoof(sp)
			for i := range r.Flows {
				if r.Flows[i].Name == name {
					f(&r.Flows[i])
				}
			}
			return r
		}
	}
	cases := []struct {
		name  string
		res   func(*scenarios.Spoof) lifeprobe.Spoofing
		props []verdict.Property
	}{
		{"keeps its class", nil, nil},
		{"forged IP marked as the victim", mutate(verdict.SpoofForgedIP, func(f *lifeprobe.SpoofedFlow) { f.DSCP = map[int]uint64{46: 1500} }), []verdict.Property{verdict.DSCP}},
		{"forged IP never seen", mutate(verdict.SpoofForgedIP, func(f *lifeprobe.SpoofedFlow) { f.Seen, f.DSCP = 0, nil }), []verdict.Property{verdict.DSCP}},
		{"forged MAC leaves the node", mutate(verdict.SpoofForgedMAC, func(f *lifeprobe.SpoofedFlow) { f.Seen, f.DSCP = 3, map[int]uint64{10: 3} }), []verdict.Property{verdict.PortSecurity}},
		{"forged MAC never sent", mutate(verdict.SpoofForgedMAC, func(f *lifeprobe.SpoofedFlow) { f.Sent = 0 }), []verdict.Property{verdict.PortSecurity}},
		{"control frames lost", mutate(verdict.SpoofControl, func(f *lifeprobe.SpoofedFlow) { f.Seen, f.DSCP = 299, map[int]uint64{46: 299} }), []verdict.Property{verdict.DSCP}},
		{"meter bound broken", func(sp *scenarios.Spoof) lifeprobe.Spoofing {
			r := passingSpoof(sp)
			r.Verdicts = []verdict.Verdict{{Property: verdict.PolicingBound, Message: "FAIL bound"}}
			return r
		}, []verdict.Property{verdict.PolicingBound}},
		{"meter not judged", func(sp *scenarios.Spoof) lifeprobe.Spoofing {
			r := passingSpoof(sp)
			r.Verdicts = nil
			return r
		}, []verdict.Property{verdict.PolicingBound}},
	}
	for _, c := range cases {
		sim := newSim(builtin(t, "spoofing"), "23.03.1")
		sim.adv.spoofed = c.res
		res, _ := runOne(t, sim.sc, &simProv{env: sim}, ModeV4)
		if !slices.Equal(res.FailedProperties, c.props) {
			t.Errorf("%s: failed %v (%s), want %v", c.name, res.FailedProperties, res.Error, c.props)
		}
		st := stepOf(t, res, "spoof", 0)
		if len(st.Measures) < 4 || !strings.Contains(st.Measures[1].Name, verdict.SpoofForgedIP) {
			t.Errorf("%s: measures %+v, want one per flow", c.name, st.Measures)
		}
		if !slices.Contains(sim.calls, "spoof batch-1 as prod-1") {
			t.Errorf("%s: calls %v", c.name, sim.calls)
		}
	}
}

// TestAppearWindow: the first marked packet is judged two-sided against
// the join and OVN's own port-group change time of the same run.
func TestAppearWindow(t *testing.T) {
	ms := time.Millisecond
	base := &lifeprobe.Baseline{Add: lifeprobe.NewSpread([]time.Duration{40 * ms, 50 * ms, 60 * ms})}
	cases := []struct {
		name  string
		a     lifeprobe.Appearance
		props []verdict.Property
	}{
		{"joined before up, marked at up", lifeprobe.Appearance{PortUp: 120 * ms, InGroup: 30 * ms, FirstPacket: 110 * ms, FirstMarked: 110 * ms, Marking: marks.Count{Packets: 400}}, nil},
		{"joined late, marked within OVN's time", lifeprobe.Appearance{PortUp: 100 * ms, InGroup: 200 * ms, FirstPacket: 90 * ms, FirstMarked: 250 * ms, Marking: marks.Count{Packets: 400, Unmarked: 2}}, nil},
		{"marked before the join (bridging row)", lifeprobe.Appearance{PortUp: 100 * ms, InGroup: 300 * ms, FirstPacket: 90 * ms, FirstMarked: 90 * ms, Marking: marks.Count{Packets: 400}}, nil},
		{"marked before the LSP exists", lifeprobe.Appearance{PortUp: 100 * ms, InGroup: 300 * ms, FirstPacket: -5 * ms, FirstMarked: -5 * ms, Marking: marks.Count{Packets: 400}}, []verdict.Property{verdict.Delay}},
		{"marked too late", lifeprobe.Appearance{PortUp: 100 * ms, InGroup: 30 * ms, FirstPacket: 90 * ms, FirstMarked: 401 * ms, Marking: marks.Count{Packets: 400}}, []verdict.Property{verdict.Delay}},
		{"never marked", lifeprobe.Appearance{PortUp: 100 * ms, InGroup: 30 * ms, Marking: marks.Count{Packets: 400, Unmarked: 0}}, []verdict.Property{verdict.Delay}},
		{"too many unmarked", lifeprobe.Appearance{PortUp: 100 * ms, InGroup: 30 * ms, FirstPacket: 90 * ms, FirstMarked: 110 * ms, Marking: marks.Count{Packets: 400, Unmarked: 3}}, []verdict.Property{verdict.Unmarked}},
	}
	for _, c := range cases {
		sim := newSim(builtin(t, "vm-after-policy"), "23.03.1")
		sim.adv.baseline, sim.adv.appear = base, &c.a
		res, _ := runOne(t, sim.sc, &simProv{env: sim}, ModeV4)
		if !slices.Equal(res.FailedProperties, c.props) {
			t.Errorf("%s: failed %v (%s), want %v", c.name, res.FailedProperties, res.Error, c.props)
		}
		st := stepOf(t, res, "startVM", 1)
		if len(st.Measures) != 7 || !strings.Contains(st.Measures[3].Name, "first marked packet on the uplink") || st.Measures[3].Duration != c.a.FirstMarked {
			t.Errorf("%s: measures %+v, want the appearance figures", c.name, st.Measures)
		}
		if lo, hi := AppearWindow(c.a, 60*ms, 300*ms); !strings.Contains(st.Measures[3].Note, fmt.Sprintf("window [%v, %v]", lo, hi)) {
			t.Errorf("%s: note %q does not state the window", c.name, st.Measures[3].Note)
		}
	}
	if lo, hi := AppearWindow(lifeprobe.Appearance{PortUp: 100 * ms, InGroup: 30 * ms}, 60*ms, 300*ms); lo != 0 || hi != 400*ms {
		t.Errorf("window [%v, %v], want [0s, 400ms]", lo, hi)
	}
}

// TestBaselineRecorded: the ovnBaseline step reports OVN's own figures.
func TestBaselineRecorded(t *testing.T) {
	sim := newSim(builtin(t, "vm-after-policy"), "23.03.1")
	res, _ := runOne(t, sim.sc, &simProv{env: sim}, ModeV4)
	st := stepOf(t, res, "ovnBaseline", 0)
	if st.Status != results.Pass || len(st.Measures) != 3 || st.Measures[0].Duration != 50*time.Millisecond || st.Measures[1].Duration != 60*time.Millisecond {
		t.Errorf("baseline step %s %+v, want median 50ms and max 60ms", st.Status, st.Measures)
	}
	if !slices.Contains(sim.calls, "ovnBaseline ref-1") || !slices.Contains(sim.calls, "startVMProbed prod-late-2") {
		t.Errorf("calls %v", sim.calls)
	}
}

// churnScenario is the shipped churn scenario shortened for the double.
func churnScenario(t *testing.T) *scenarios.Scenario {
	sc := builtin(t, "churn")
	for i := range sc.Steps {
		if c := sc.Steps[i].Churn; c != nil {
			c.Duration, c.Interval = 1500*time.Millisecond, 50*time.Millisecond
		}
	}
	return sc
}

// TestChurnRestoresAndAudits: the churn writes through the Cluster side,
// confirms rejected revisions, audits every state, puts everything back
// and converges; a sighting fails it as nb-audit.
func TestChurnRestoresAndAudits(t *testing.T) {
	sim := newSim(churnScenario(t), "23.03.1")
	sim.measure = passingMeasure
	res, _ := runOne(t, sim.sc, &simProv{env: sim}, ModeV4)
	if res.Status != results.Pass {
		t.Fatalf("churn scenario %s: %s", res.Status, res.Error)
	}
	st := stepOf(t, res, "churn", 0)
	figures := map[string]int{}
	for _, m := range st.Measures {
		figures[m.Name] = m.Count
	}
	if figures["operations"] < 15 || figures["NB states audited"] < figures["operations"]/2 || figures["rejected revisions confirmed (Accepted=False for their generation)"] == 0 {
		t.Errorf("churn figures %v, want operations, audited states and confirmed rejections", figures)
	}
	for _, call := range []string{"label c-1", "delete NetworkQoS vms/bronze", "apply NetworkQoS vms/broken"} {
		if !slices.Contains(sim.calls, call) {
			t.Errorf("no %q among the churn's calls", call)
		}
	}
	// the same scenario without the churn step ends in the same rows
	plain := newSim(churnScenario(t), "23.03.1")
	plain.measure = passingMeasure
	plain.sc.Steps = slices.DeleteFunc(plain.sc.Steps, func(s scenarios.Step) bool { return s.Churn != nil })
	if res, _ := runOne(t, plain.sc, &simProv{env: plain}, ModeV4); res.Status != results.Pass {
		t.Fatalf("churn scenario without the churn: %s", res.Error)
	}
	if missing, extra := diffRows(plain.rows(), sim.rows()); len(missing)+len(extra) > 0 || len(sim.rows().QoS) != 2 {
		t.Errorf("rows after the churn differ from the rows without it: missing %v extra %v", missing, extra)
	}

	bad := newSim(churnScenario(t), "23.03.1")
	bad.audit = func() []Sighting {
		return []Sighting{{At: time.Now(), Row: "QoS x", Problem: "references a missing port group"}}
	}
	res, _ = runOne(t, bad.sc, &simProv{env: bad}, ModeV4)
	if st := stepOf(t, res, "churn", 0); st.Status != results.Fail || !slices.Contains(res.FailedProperties, verdict.Audit) {
		t.Errorf("churn with a sighting: step %s, properties %v, want nb-audit", st.Status, res.FailedProperties)
	}
}

// TestChurnMustExercise: a churn whose reject patch rejects nothing
// fails as churn: the rejected-object check never applied.
func TestChurnMustExercise(t *testing.T) {
	sc := churnScenario(t)
	for i := range sc.Steps {
		if c := sc.Steps[i].Churn; c != nil {
			c.RejectPatch = map[string]any{"spec": map[string]any{"priority": 5}}
			c.Objects, c.Base, c.Applied = c.Objects[:3], c.Base[:3], c.Applied[:3] // without broken
		}
	}
	sim := newSim(sc, "23.03.1")
	res, _ := runOne(t, sc, &simProv{env: sim}, ModeV4)
	st := stepOf(t, res, "churn", 0)
	if st.Status != results.Fail || !strings.Contains(st.Error, "no rejected revision") || !slices.Contains(res.FailedProperties, verdict.Churn) {
		t.Errorf("churn without rejections: step %s %q, properties %v, want churn", st.Status, st.Error, res.FailedProperties)
	}
}
