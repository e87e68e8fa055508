package world

import (
	"github.com/nqos/nqos/internal/qos"
	"github.com/nqos/nqos/scenarios"
)

// Compiled is the compiler's output for a scenario's manifests as
// written (every applied kind in force, one launcher pod per VM that
// starts with the topology): the rows and ports package harness/verify
// builds its plan from.
type Compiled struct {
	Desired qos.Desired
	ports   map[string]string // VM -> its logical switch port
}

// Compile runs the compiler over sc's manifests as written.
func Compile(sc *scenarios.Scenario) (*Compiled, error) {
	w := New(sc)
	for _, m := range sc.Manifests {
		if m.Revision == 0 && !m.Ignored && !m.Topological() {
			w.Apply(m)
		}
	}
	d, err := w.Compile()
	if err != nil {
		return nil, err
	}
	c := &Compiled{Desired: d, ports: map[string]string{}}
	for i := range sc.Topology.VMs {
		vm := &sc.Topology.VMs[i]
		c.ports[vm.Name] = w.Port(vm)
	}
	return c, nil
}

// Port is the logical switch port of VM vm ("" for an unknown VM).
func (c *Compiled) Port(vm string) string { return c.ports[vm] }
