package harness

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/nqos/nqos/harness/lifeprobe"
	"github.com/nqos/nqos/harness/marks"
	"github.com/nqos/nqos/harness/verdict"

	"github.com/nqos/nqos/internal/qos"

	"github.com/nqos/nqos/harness/results"
	"github.com/nqos/nqos/scenarios"
)

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
