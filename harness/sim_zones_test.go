package harness

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/nqos/nqos/harness/results"
)

// simZones is the simEnv's zone controllers (zone "node<i+1>" for node
// i): which are stopped, and the objects applied while one was, which
// the aggregate names as pending in that zone until it starts again.
type simZones struct {
	down    map[int]bool
	pending map[string][]int // object key -> stopped zones' nodes
}

// appliedWhileDown notes an object applied while zones were stopped.
func (s *simEnv) appliedWhileDown(key string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for n, down := range s.zones.down {
		if down && !slices.Contains(s.zones.pending[key], n) {
			if s.zones.pending == nil {
				s.zones.pending = map[string][]int{}
			}
			s.zones.pending[key] = append(s.zones.pending[key], n)
		}
	}
}

func (s *simEnv) StopZoneController(_ context.Context, node int, mode string) ([]results.Measure, error) {
	if err := s.call(fmt.Sprintf("stopZoneController %d %s", node, mode)); err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.zones.down == nil {
		s.zones.down = map[int]bool{}
	}
	s.zones.down[node] = true
	return nil, nil
}

func (s *simEnv) StartZoneController(_ context.Context, node int) (ZoneStart, error) {
	if err := s.call(fmt.Sprintf("startZoneController %d", node)); err != nil {
		return ZoneStart{}, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.zones.down, node)
	for key, nodes := range s.zones.pending {
		s.zones.pending[key] = slices.DeleteFunc(nodes, func(n int) bool { return n == node })
	}
	return ZoneStart{}, nil
}

func (s *simEnv) AggregateStatus(_ context.Context, namespace, name string) (string, error) {
	key := namespace + "/" + name
	s.mu.Lock()
	defer s.mu.Unlock()
	var zones []string
	for _, n := range s.zones.pending[key] {
		zones = append(zones, fmt.Sprintf("node%d", n+1))
	}
	slices.Sort(zones)
	if len(zones) > 0 {
		return "NetworkQoS Destinations pending in zones " + strings.Join(zones, ", "), nil
	}
	for _, m := range s.sc.Manifests {
		if m.QoS != nil && m.Key() == "NetworkQoS "+key && s.world.Applied(m.ID) != nil {
			return "NetworkQoS Destinations applied", nil
		}
	}
	return "", nil
}

var _ ZoneControl = (*simEnv)(nil)
