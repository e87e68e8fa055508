package harness

import (
	"context"
	"strings"
	"time"

	"github.com/nqos/nqos/internal/qos"

	"github.com/nqos/nqos/reports"
	"github.com/nqos/nqos/scenarios"
)

// The simEnv's side of the adversarial steps. Like the rest of the double
// it has no datapath: unless a test sets spoofed, baseline or appear, it
// reports figures that satisfy the step's expectations. Its conditions
// are written at once (observedGeneration = generation); a generation
// counts each distinct applied revision of an object.

// simAdv is the simEnv's adversarial state; tests set the results.
type simAdv struct {
	spoofed  func(*scenarios.Spoof) SpoofResult
	baseline *BaselineResult
	appear   *Appearance
	gens     map[ObjectKey]simGen
}

type simGen struct {
	rev *scenarios.Manifest
	gen int64
}

func (s *simEnv) Spoof(_ context.Context, sp *scenarios.Spoof) (SpoofResult, error) {
	if err := s.call("spoof " + sp.VM + " as " + sp.As); err != nil {
		return SpoofResult{}, err
	}
	if s.adv.spoofed != nil {
		return s.adv.spoofed(sp), nil
	}
	return passingSpoof(sp), nil
}

// passingSpoof is what a correct datapath shows: both spoofer flows in
// its class and policed, the forged-MAC frames dropped, the control in
// the forged VM's class.
func passingSpoof(sp *scenarios.Spoof) SpoofResult {
	return SpoofResult{Flows: []SpoofFlow{
		{Name: SpoofOwn, Sent: 3000, Seen: 1500, DSCP: map[int]uint64{sp.DSCP: 1500}},
		{Name: SpoofForgedIP, Sent: 3000, Seen: 1500, DSCP: map[int]uint64{sp.DSCP: 1500}},
		{Name: SpoofForgedMAC, Sent: 3000},
		{Name: SpoofControl, Sent: 300, Seen: 300, DSCP: map[int]uint64{sp.AsDSCP: 300}},
	}, Verdicts: []reports.Verdict{{Check: PropPolicing, Pass: true, Message: "PASS spoofer-class policing-bound"}}}
}

func (s *simEnv) PortGroupBaseline(_ context.Context, vm *scenarios.VM, _ *scenarios.OVNBaseline) (BaselineResult, error) {
	if err := s.call("ovnBaseline " + vm.Name); err != nil {
		return BaselineResult{}, err
	}
	if s.adv.baseline != nil {
		return *s.adv.baseline, nil
	}
	return BaselineResult{Add: []time.Duration{40 * time.Millisecond, 50 * time.Millisecond, 60 * time.Millisecond},
		Remove: []time.Duration{45 * time.Millisecond}}, nil
}

func (s *simEnv) StartVMProbed(_ context.Context, vm *scenarios.VM, _ *scenarios.Probe) (Appearance, error) {
	if err := s.call("startVMProbed " + vm.Name); err != nil {
		return Appearance{}, err
	}
	if !s.noJoin {
		_ = s.change(func() { s.world.startVM(vm.Name) })
	}
	a := Appearance{PortUp: 120 * time.Millisecond, InGroup: 30 * time.Millisecond, FirstPacket: 110 * time.Millisecond,
		FirstMarked: 110 * time.Millisecond, Packets: 400}
	if s.adv.appear != nil {
		a = *s.adv.appear
	}
	a.LSP = s.world.port(vm)
	return a, nil
}

func (s *simEnv) AcceptedStatus(_ context.Context, namespace, name string) (ObjectStatus, error) {
	k := ObjectKey{Namespace: namespace, Name: name}
	d := s.compiled()
	s.mu.Lock()
	defer s.mu.Unlock()
	var rev *scenarios.Manifest
	for _, m := range s.world.applied {
		if m.Namespace == namespace && m.Name == name && m.QoS != nil {
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
		s.audit = func() []Sighting { return ownedByRejected(s.Rows(), rejected) }
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
