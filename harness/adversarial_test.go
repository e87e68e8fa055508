package harness

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/nqos/nqos/harness/lifeprobe"
	"github.com/nqos/nqos/harness/marks"
	"github.com/nqos/nqos/harness/results"
	"github.com/nqos/nqos/harness/verdict"
	"github.com/nqos/nqos/internal/qos"
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
	if d := lifeprobe.DiffRows(plain.rows(), sim.rows()); !d.Empty() || len(sim.rows().QoS) != 2 {
		t.Errorf("rows after the churn differ from the rows without it: missing %v extra %v", d.Missing, d.Extra)
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

// The simEnv's side of the adversarial steps. Like the rest of the double
// it has no datapath: unless a test sets spoofed, baseline or appear, it
// reports figures that satisfy the step's expectations. Its conditions
// are written at once (observedGeneration = generation); a generation
// counts each distinct applied revision of an object.

// simAdv is the simEnv's adversarial state; tests set the results.
type simAdv struct {
	spoofed  func(*scenarios.Spoof) lifeprobe.Spoofing
	baseline *lifeprobe.Baseline
	appear   *lifeprobe.Appearance
	gens     map[ObjectKey]simGen
	// staleStop: StopVM succeeds but the VM's pod and port stay (the
	// rows keep the port in its port groups)
	staleStop bool
}

type simGen struct {
	rev *scenarios.Manifest
	gen int64
}

func (s *simEnv) Spoof(_ context.Context, sp *scenarios.Spoof) (lifeprobe.Spoofing, error) {
	if err := s.call("spoof " + sp.VM + " as " + sp.As); err != nil {
		return lifeprobe.Spoofing{}, err
	}
	if s.adv.spoofed != nil {
		return s.adv.spoofed(sp), nil
	}
	return passingSpoof(sp), nil
}

// passingSpoof is what a correct datapath shows: both spoofer flows in
// its class and policed, the forged-MAC frames dropped, the control in
// the forged VM's class.
func passingSpoof(sp *scenarios.Spoof) lifeprobe.Spoofing {
	return lifeprobe.Spoofing{Flows: []lifeprobe.SpoofedFlow{
		{Name: verdict.SpoofOwn, Sent: 3000, Seen: 1500, DSCP: map[int]uint64{sp.DSCP: 1500}},
		{Name: verdict.SpoofForgedIP, Sent: 3000, Seen: 1500, DSCP: map[int]uint64{sp.DSCP: 1500}},
		{Name: verdict.SpoofForgedMAC, Sent: 3000},
		{Name: verdict.SpoofControl, Sent: 300, Seen: 300, DSCP: map[int]uint64{sp.AsDSCP: 300}},
	}, Verdicts: []verdict.Verdict{{Property: verdict.PolicingBound, Pass: true, Message: "PASS spoofer-class policing-bound"}}}
}

func (s *simEnv) PortGroupBaseline(_ context.Context, vm *scenarios.VM, _ *scenarios.OVNBaseline) (lifeprobe.Baseline, error) {
	if err := s.call("ovnBaseline " + vm.Name); err != nil {
		return lifeprobe.Baseline{}, err
	}
	if s.adv.baseline != nil {
		return *s.adv.baseline, nil
	}
	return lifeprobe.Baseline{Add: lifeprobe.NewSpread([]time.Duration{40 * time.Millisecond, 50 * time.Millisecond, 60 * time.Millisecond}),
		Remove: lifeprobe.NewSpread([]time.Duration{45 * time.Millisecond})}, nil
}

func (s *simEnv) StartVMProbed(_ context.Context, vm *scenarios.VM, _ *scenarios.Probe) (lifeprobe.Appearance, error) {
	if err := s.call("startVMProbed " + vm.Name); err != nil {
		return lifeprobe.Appearance{}, err
	}
	if !s.noJoin {
		_ = s.change(func() { s.world.StartVM(vm.Name) })
	}
	a := lifeprobe.Appearance{PortUp: 120 * time.Millisecond, InGroup: 30 * time.Millisecond, FirstPacket: 110 * time.Millisecond,
		FirstMarked: 110 * time.Millisecond, Marking: marks.Count{Packets: 400}}
	if s.adv.appear != nil {
		a = *s.adv.appear
	}
	a.LSP = s.world.Port(vm)
	return a, nil
}

func (s *simEnv) AcceptedStatus(_ context.Context, namespace, name string) (ObjectStatus, error) {
	k := ObjectKey{Namespace: namespace, Name: name}
	d := s.compiled()
	s.mu.Lock()
	defer s.mu.Unlock()
	var rev *scenarios.Manifest
	for _, sm := range s.sc.Manifests {
		if m := s.world.Applied(sm.ID); m != nil && m.Namespace == namespace && m.Name == name && m.QoS != nil {
			rev = m
		}
	}
	if rev == nil {
		return ObjectStatus{}, nil
	}
	if s.adv.gens == nil {
		s.adv.gens = map[ObjectKey]simGen{}
	}
	g := s.adv.gens[k]
	if g.rev != rev {
		g = simGen{rev: rev, gen: g.gen + 1}
		s.adv.gens[k] = g
	}
	return ObjectStatus{Found: true, Generation: g.gen, Observed: g.gen, Accepted: acceptedOf(d, k)}, nil
}

// WatchRejected replaces the scenario's watcher while it runs (the
// double audits through one watcher) and puts it back on Stop. Unless a
// test set an audit, it audits that no object rejected right now owns a
// QoS row or port group.
func (s *simEnv) WatchRejected(_ context.Context, rejected func(ObjectKey) bool) (Watch, error) {
	w := &simWatch{s: s, seen: map[string]bool{}}
	s.mu.Lock()
	prev, prevAudit := s.watch, s.audit
	s.watch = w
	if s.audit == nil {
		s.audit = func() []Sighting { return ownedByRejected(s.rows(), rejected) }
	}
	s.mu.Unlock()
	w.audit()
	return &simRestore{simWatch: w, put: func() {
		s.mu.Lock()
		s.watch, s.audit = prev, prevAudit
		s.mu.Unlock()
	}}, nil
}

func ownedByRejected(rows qos.Desired, rejected func(ObjectKey) bool) []Sighting {
	var out []Sighting
	owner := func(ids map[string]string) (ObjectKey, bool) {
		ns, name, ok := strings.Cut(ids[qos.ObjectNameKey], ":")
		return ObjectKey{Namespace: ns, Name: name}, ok && rejected(ObjectKey{Namespace: ns, Name: name})
	}
	for _, q := range rows.QoS {
		if k, bad := owner(q.ExternalIDs); bad {
			out = append(out, Sighting{At: time.Now(), Row: "QoS " + q.Match, Problem: "owned by rejected " + k.Name})
		}
	}
	return out
}

type simRestore struct {
	*simWatch
	put func()
}

func (r *simRestore) Stop() []Sighting {
	r.put()
	return r.simWatch.Stop()
}

// countCalls counts the double's calls with the prefix.
func countCalls(calls []string, prefix string) int {
	n := 0
	for _, c := range calls {
		if strings.HasPrefix(c, prefix) {
			n++
		}
	}
	return n
}

func churnFigures(st results.Step) map[string]int {
	figures := map[string]int{}
	for _, m := range st.Measures {
		figures[m.Name] = m.Count
	}
	return figures
}

// TestChurnStartsAndStopsLateVMs: the churn starts and stops its late
// VMs through the Cluster side, their ports join the port groups their
// topology labels select while they run, every start is matched by a
// stop (the put-back stops the ones left running) and the NB converges.
func TestChurnStartsAndStopsLateVMs(t *testing.T) {
	sim := newSim(churnScenario(t), "23.03.1")
	sim.measure = passingMeasure
	late := []string{"c-4", "c-5", "c-6"}
	joined := map[string]bool{}
	sim.audit = func() []Sighting { // runs under no lock, after each change
		for _, pg := range sim.rows().PortGroups {
			for _, name := range late {
				if slices.Contains(pg.Ports, sim.world.Port(sim.sc.VM(name))) {
					joined[name] = true
				}
			}
		}
		return nil
	}
	res, _ := runOne(t, sim.sc, &simProv{env: sim}, ModeV4)
	if res.Status != results.Pass {
		t.Fatalf("churn scenario %s: %s", res.Status, res.Error)
	}
	fig := churnFigures(stepOf(t, res, "churn", 0))
	starts, stops := fig["late VMs started (launcher pod, guest, LSP)"], fig["late VMs stopped (launcher pod, LSP, guest deleted)"]
	if starts == 0 || stops == 0 || starts != countCalls(sim.calls, "runVM ") {
		t.Errorf("late VMs started %d, stopped %d, runVM calls %d: want both > 0 and one call per start", starts, stops, countCalls(sim.calls, "runVM "))
	}
	if n := countCalls(sim.calls, "stopVM "); n != starts || n < stops {
		t.Errorf("%d stopVM calls for %d starts (%d stops during the churn): every started VM must be stopped again", n, starts, stops)
	}
	for _, name := range late {
		if !sim.world.Absent(name) {
			t.Errorf("late VM %s runs after the churn, want it stopped as before the step", name)
		}
	}
	if len(joined) == 0 {
		t.Errorf("no late VM's port ever joined a port group during the churn")
	}
}

// TestChurnCatchesStoppedVMsPort: a stopped VM whose port stays in its
// port groups makes the NB differ from the intent: the churn fails as
// nb-rows after its converge timeout.
func TestChurnCatchesStoppedVMsPort(t *testing.T) {
	sc := churnScenario(t)
	for i := range sc.Steps {
		if c := sc.Steps[i].Churn; c != nil {
			c.Converge = 300 * time.Millisecond
		}
	}
	sim := newSim(sc, "23.03.1")
	sim.adv.staleStop = true
	res, _ := runOne(t, sc, &simProv{env: sim}, ModeV4)
	st := stepOf(t, res, "churn", 0)
	stale := strings.Contains(st.Error, "virt-launcher-c-4") || strings.Contains(st.Error, "virt-launcher-c-5") || strings.Contains(st.Error, "virt-launcher-c-6")
	if st.Status != results.Fail || !strings.Contains(st.Error, "not converged") || !stale || !slices.Contains(res.FailedProperties, verdict.Rows) {
		t.Errorf("churn with stale stopped ports: step %s %q, properties %v, want nb-rows naming a late VM's port", st.Status, st.Error, res.FailedProperties)
	}
}

// TestChurnJudgesLateVMs: a churn with late VMs that never started or
// never stopped one fails as churn; one without late VMs is not judged.
func TestChurnJudgesLateVMs(t *testing.T) {
	cases := []struct {
		late             []string
		creates, deletes int
		fail             bool
	}{
		{nil, 0, 0, false},
		{[]string{"c-4"}, 2, 1, false},
		{[]string{"c-4"}, 0, 0, true},
		{[]string{"c-4"}, 3, 0, true},
	}
	for _, c := range cases {
		ch := &churner{c: &scenarios.Churn{LateVMs: c.late}, res: churnResult{byKind: map[string]int{opVMCreate: c.creates, opVMDelete: c.deletes}}}
		if got := ch.judgeLate(); (len(got) > 0) != c.fail {
			t.Errorf("late %v, %d starts, %d stops: %v, want failing %v", c.late, c.creates, c.deletes, got, c.fail)
		}
	}
}
