package localnetenv

import (
	"context"
	"log/slog"

	"github.com/nqos/nqos/harness"
	"github.com/nqos/nqos/scenarios"
	"github.com/nqos/nqos/topo/localnet"
)

// backend is what the embedded testbed (embeddedBackend) and a KinD
// cluster (kindBackend, kind.go) do differently for the harness: what
// they lack, the testbed spec, who runs the controller, what is cleared
// at the end and which capabilities the environment offers. The rest of
// the package never asks which one it runs on; Provisioner.backend is
// the one place that chooses.
type backend interface {
	// lacks are the capabilities the environments lack, each with why.
	lacks() map[harness.Capability]string
	// check rejects a scenario the backend cannot run at all.
	check(sc *scenarios.Scenario) error
	// configure completes the testbed spec.
	configure(s *localnet.Spec)
	// startController has the controller running for the scenario.
	startController(ctx context.Context, e *testbedEnv, log *slog.Logger) error
	// clear removes what the scenario made beyond the testbed.
	clear(ctx context.Context, e *testbedEnv) error
	// env is the harness environment of e.
	env(e *testbedEnv) harness.Env
}

// backend is the provisioner's backend: a KinD cluster when Kind is set.
func (p *Provisioner) backend() backend {
	if p.Kind != nil {
		return kindBackend{cluster: p.Kind}
	}
	return embeddedBackend{crds: p.CRDFiles, topology: p.Topology}
}

// embeddedBackend runs the testbed's own Kubernetes API and the
// controller as the harness's processes.
type embeddedBackend struct {
	crds     []string
	topology localnet.Topology
}

// lacks: the zone steps need a controller per zone (interconnect).
func (b embeddedBackend) lacks() map[harness.Capability]string {
	if b.topology == localnet.Interconnect {
		return nil
	}
	return map[harness.Capability]string{
		harness.CapZones: "one zone's controller: the central topology runs one controller for every node (run it with --topology interconnect)",
	}
}

func (embeddedBackend) check(*scenarios.Scenario) error { return nil }

func (b embeddedBackend) configure(s *localnet.Spec) {
	s.WithKube = true
	s.CRDFiles = b.crds
}

func (embeddedBackend) startController(ctx context.Context, e *testbedEnv, log *slog.Logger) error {
	e.plane = newControlPlane(e.tb.Topology())
	return e.plane.start(ctx, e, log)
}

func (embeddedBackend) clear(context.Context, *testbedEnv) error { return nil }

func (embeddedBackend) env(e *testbedEnv) harness.Env { return e }
