package world

import (
	"fmt"
	"net/netip"

	"github.com/nqos/nqos/internal/intent"
	"github.com/nqos/nqos/internal/qos"
	"github.com/nqos/nqos/scenarios"
)

// Packet is a flow's first packet as the compiled intent sees it.
type Packet struct {
	Src, Dst netip.Addr
	Protocol string // tcp, udp, sctp or icmp
	DstPort  int
}

// Winners are the compiled rows that decide one packet.
type Winners = intent.Winners

// Compiled is the compiler's output for a scenario's manifests as
// written (every applied kind in force, one launcher pod per VM that
// starts with the topology): the rows the three-way judge compares with
// ovn-trace.
type Compiled struct {
	Desired qos.Desired
	sc      *scenarios.Scenario
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
	c := &Compiled{Desired: d, sc: sc, ports: map[string]string{}}
	for i := range sc.Topology.VMs {
		vm := &sc.Topology.VMs[i]
		c.ports[vm.Name] = w.Port(vm)
	}
	return c, nil
}

// Port is the logical switch port of VM vm ("" for an unknown VM).
func (c *Compiled) Port(vm string) string { return c.ports[vm] }

// Switch is the logical switch of VM vm's network.
func (c *Compiled) Switch(vm string) string {
	if v := c.sc.VM(vm); v != nil {
		return qos.SwitchName(v.Network, qos.TopologyLocalnet)
	}
	return ""
}

// Intent is the compiled intent for packet p sent by VM vm on OVN
// release ovn ("23.03.1").
func (c *Compiled) Intent(ovn, vm string, p Packet) (Winners, error) {
	port := c.ports[vm]
	if port == "" {
		return Winners{}, fmt.Errorf("scenario %s: no VM %q", c.sc.Name, vm)
	}
	pk := intent.Packet{InPort: port, Src: p.Src, Dst: p.Dst, Protocol: p.Protocol, DstPort: p.DstPort}
	return intent.StageWinners(&c.Desired, c.Switch(vm), pk, ovn)
}
