package harness

import (
	"context"
	"fmt"

	"github.com/nqos/nqos/flow"
	"github.com/nqos/nqos/internal/tc"
	"github.com/nqos/nqos/scenarios"
)

// The simEnv's fabric: it records the calls and keeps the installed
// hierarchies; every EgressStats read adds 1000 packets to each class,
// of which it drops the smallest fraction all of the scenario's class
// expectations for that class accept (a double for the step engine:
// it proves nothing about shaping). Deliveries see nothing.

var _ Fabric = (*simEnv)(nil)

func (s *simEnv) ShapeEgress(_ context.Context, p scenarios.Port, h *tc.HTB) error {
	if h == nil {
		return s.call("unshape " + scenarios.Port.Name(p))
	}
	return s.call(fmt.Sprintf("shape %s %d classes", scenarios.Port.Name(p), len(h.Classes)))
}

func (s *simEnv) EgressStats(_ context.Context, p scenarios.Port) ([]tc.ClassStats, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.classes == nil {
		s.classes = map[string]tc.ClassStats{}
	}
	var h []string
	seen := map[string]bool{}
	for _, st := range s.sc.Steps { // the classes any egress step names on p
		if e := st.Egress; e != nil && scenarios.SamePort(e.Port, p) {
			for _, c := range e.Classes {
				if !seen[c.Name] {
					seen[c.Name] = true
					h = append(h, c.Name)
				}
			}
		}
	}
	var out []tc.ClassStats
	for _, name := range h {
		k := classKey(p, name)
		f := s.dropFraction(p, name)
		c := s.classes[k]
		c.Name = name
		c.Drops += uint64(1000 * f)
		c.Packets += 1000 - uint64(1000*f)
		s.classes[k] = c
		out = append(out, c)
	}
	return out, nil
}

// dropFraction is the smallest drop fraction every class expectation of
// the scenario on that class accepts.
func (s *simEnv) dropFraction(p scenarios.Port, class string) float64 {
	f := 0.0
	for _, st := range s.sc.Steps {
		if st.Measure == nil {
			continue
		}
		for _, c := range st.Measure.Classes {
			if c.Class == class && scenarios.SamePort(c.Port, p) {
				f = max(f, c.Drops.Min)
			}
		}
	}
	return f
}

func (s *simEnv) SetTrustBoundary(_ context.Context, node int, untrusted bool) error {
	return s.call(fmt.Sprintf("trust node %d untrusted=%v", node, untrusted))
}

func (s *simEnv) WatchDelivery(_ context.Context, dests []string, _ func(string) string) (Delivery, error) {
	return simDelivery{}, s.call(fmt.Sprintf("watch delivery %v", dests))
}

func (s *simEnv) ClearFabric(context.Context) error { return nil }

type simDelivery struct{}

func (simDelivery) Finish(context.Context, map[string][]flow.Spec) (map[string]Measured, error) {
	return map[string]Measured{}, nil
}
