package harness

import (
	"context"
	"fmt"
	"reflect"

	"github.com/nqos/nqos/scenarios"
)

// stepKind is how the runner executes one kind of step and what it needs
// of the backend beyond the core Env.
type stepKind struct {
	// name is the kind's name, as scenarios.Step.Kind returns it.
	name string
	// run is shaped as a method expression of execution.
	run   func(ex *execution, ctx context.Context, i int, st *scenarios.Step) error
	needs []Capability
	// probedNeeds are needed too when the step runs under a probe.
	probedNeeds []Capability
	// stepNeeds, if set, are what this step needs beyond needs (from
	// what the step acts on).
	stepNeeds func(st *scenarios.Step) []Capability
}

// kindTable's methods are the runner's step kinds, one method per kind,
// each beside its kind's run function: the method returns the kind's
// entry. Adding a kind to the runner is adding its method.
type kindTable struct{}

// stepKinds is the one table of executable step kinds, by name: every
// method of kindTable (a test checks it against scenarios.Kinds and the
// documentation).
func stepKinds() map[string]stepKind {
	t := reflect.ValueOf(kindTable{})
	out := make(map[string]stepKind, t.NumMethod())
	for i := range t.NumMethod() {
		k := t.Method(i).Interface().(func() stepKind)()
		out[k.name] = k
	}
	return out
}

// Capability is what a step kind needs beyond the core Env. Each is
// provided by one of the optional interfaces of env.go; a backend
// declares those its environments lack (Provisioner.Lacks), with why.
type Capability string

// Capabilities.
const (
	CapMigration         Capability = "migration"          // Lifecycle.Migrate
	CapLauncherRestart   Capability = "launcher-restart"   // Lifecycle.RestartLauncher
	CapGuestIP           Capability = "guest-ip"           // Lifecycle.ChangeGuestIP
	CapDaemonRestart     Capability = "daemon-restart"     // Daemons
	CapControllerProcess Capability = "controller-process" // ControllerProcess
	CapAdversary         Capability = "adversary"          // Adversary
	CapFabric            Capability = "fabric"             // Fabric
	CapZones             Capability = "zones"              // ZoneControl
	// CapDHCPNetwork is a network whose NAD or CUDN asks for DHCP IPAM
	// (a topology network with ipam dhcp): the scenario as a whole.
	CapDHCPNetwork Capability = "dhcp-network"
)

// Needs are the capabilities a step needs: its kind's, and its probed
// form's when it runs under a probe.
func Needs(st *scenarios.Step) []Capability {
	k, ok := stepKinds()[st.Kind()]
	if !ok {
		return nil
	}
	out := append([]Capability(nil), k.needs...)
	if st.Probe != nil {
		out = append(out, k.probedNeeds...)
	}
	if k.stepNeeds != nil {
		out = append(out, k.stepNeeds(st)...)
	}
	return out
}

// Unsupported says why a backend lacking the capabilities lacks cannot
// run the scenario ("" when it can): the controller run as a process of
// the harness (restartController, upgrade, controller.boot false), a
// network with DHCP IPAM, or the first step whose kind needs what it
// lacks (step -1: the scenario as a whole). It is decided before
// anything boots.
func Unsupported(sc *scenarios.Scenario, backend string, lacks map[Capability]string) (step int, err *NotSupportedError) {
	if why, ok := lacks[CapControllerProcess]; ok && sc.ControllerProcess() {
		return -1, &NotSupportedError{Backend: backend, What: why}
	}
	if why, ok := lacks[CapDHCPNetwork]; ok {
		for _, n := range sc.Topology.Networks {
			if n.IPAM == scenarios.IPAMDHCP {
				return -1, &NotSupportedError{Backend: backend, What: fmt.Sprintf("network %s (ipam dhcp): %s", n.Name, why)}
			}
		}
	}
	for i := range sc.Steps {
		st := &sc.Steps[i]
		for _, c := range Needs(st) {
			if why, ok := lacks[c]; ok {
				return i, &NotSupportedError{Backend: backend, What: fmt.Sprintf("steps[%d] (line %d) %s: %s", i, st.Line, st.Kind(), why)}
			}
		}
	}
	return -1, nil
}

// capable is the environment as the interface T of capability c; the
// runner checked the backend's declaration before the boot, so a missing
// interface is the backend's inconsistency, reported as not supported.
func capable[T any](ex *execution, c Capability) (T, error) {
	t, ok := ex.env.(T)
	if !ok {
		return t, &NotSupportedError{Backend: ex.r.Backend, What: fmt.Sprintf("the environment has no %s capability", c)}
	}
	return t, nil
}

// capKind is a step kind needing the capability c, T its interface: run
// gets the environment as T.
func capKind[T any](name string, c Capability, run func(ex *execution, ctx context.Context, i int, st *scenarios.Step, t T) error) stepKind {
	return stepKind{name: name, needs: []Capability{c}, run: func(ex *execution, ctx context.Context, i int, st *scenarios.Step) error {
		t, err := capable[T](ex, c)
		if err != nil {
			return err
		}
		return run(ex, ctx, i, st, t)
	}}
}
