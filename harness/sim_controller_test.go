package harness

import (
	"context"

	"github.com/nqos/nqos/harness/lifeprobe"
	"github.com/nqos/nqos/scenarios"
)

// simController is the simEnv's controller: down until an upgrade step
// starts it when the scenario does not boot it; result is what every
// controller step "measures" (nil: one marked packet, nothing lost, the
// NB equal to the compiler's rows).
type simController struct {
	down   bool
	result *ControllerResult
}

func (s *simEnv) controllerDown() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.ctrl.down
}

func (s *simEnv) controllerResult() ControllerResult {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ctrl.result != nil {
		return *s.ctrl.result
	}
	return ControllerResult{Outcome: lifeprobe.Outcome{Packets: 1, Lost: map[string]int{"out": 0}}}
}

// RestartController runs the burst (the double has no process to stop:
// its rows are always the compiler's).
func (s *simEnv) RestartController(ctx context.Context, spec ControllerRestart, vm *scenarios.VM, _ *scenarios.Probe) (ControllerResult, error) {
	if err := s.call("restartController " + spec.Mode + " " + vm.Name); err != nil {
		return ControllerResult{}, err
	}
	if spec.Burst != nil {
		if err := spec.Burst(ctx); err != nil {
			return ControllerResult{}, err
		}
	}
	return s.controllerResult(), nil
}

// Upgrade starts the double's controller: its rows appear at once.
func (s *simEnv) Upgrade(_ context.Context, _ []*scenarios.Manifest, vm *scenarios.VM, _ *scenarios.Probe) (ControllerResult, error) {
	if err := s.call("upgrade " + vm.Name); err != nil {
		return ControllerResult{}, err
	}
	if err := s.change(func() { s.ctrl.down = false }); err != nil {
		return ControllerResult{}, err
	}
	return s.controllerResult(), nil
}
