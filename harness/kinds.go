package harness

import (
	"context"
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
