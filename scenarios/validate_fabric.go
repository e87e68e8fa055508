package scenarios

import (
	"fmt"
	"net/netip"
	"slices"
	"strings"

	"github.com/nqos/nqos/internal/tc"
)

func (e *Egress) validate(v *validator, at stepAt) error { return v.egress(e, at.path) }

func (m *Measure) validate(v *validator, at stepAt) error {
	return v.measure(at.s, at.idx, at.stepPath, at.st)
}

// Describe: the hierarchy and its port, or its removal.
func (e *Egress) Describe(*Step) string {
	if e.Clear {
		return "remove HTB from " + e.Port.Name()
	}
	var cs []string
	for _, c := range e.Classes {
		sel := "default"
		switch {
		case len(c.Dst) > 0:
			sel = "dst " + strings.Join(c.Dst, ",")
		case len(c.DSCP) > 0:
			sel = fmt.Sprintf("dscp %v", c.DSCP)
		}
		cs = append(cs, fmt.Sprintf("%s %s prio %d (%s)", c.Name, c.Rate, c.Prio, sel))
	}
	return fmt.Sprintf("HTB on %s: ceil %s; %s", e.Port.Name(), e.Ceil, strings.Join(cs, "; "))
}

// Describe: the flows.
func (m *Measure) Describe(*Step) string {
	return strings.Join(m.Flows, ", ") + ", measured on the uplink and where delivered"
}

// Name names the port's link.
func (p Port) Name() string {
	if p.Uplink != nil {
		return fmt.Sprintf("node %d uplink", *p.Uplink)
	}
	return "fabric port to " + p.Host
}

func (v *validator) uplinkIndex(i int, path string) error {
	if i < 0 || i >= v.sc.Topology.Nodes {
		return v.d.errAt(path, "node %d: the topology has nodes 0-%d", i, v.sc.Topology.Nodes-1)
	}
	return nil
}

func (v *validator) egress(e *Egress, path string) error {
	p := e.Port
	switch {
	case (p.Uplink == nil) == (p.Host == ""):
		return v.d.errAt(path+".port", "set exactly one of uplink (a node index) and host")
	case p.Uplink != nil:
		if err := v.uplinkIndex(*p.Uplink, path+".port.uplink"); err != nil {
			return err
		}
	case v.sc.Host(p.Host) == nil:
		return v.d.errAt(path+".port.host", "unknown external host %q", p.Host)
	}
	if e.Clear {
		if e.Ceil != 0 || len(e.Classes) > 0 {
			return v.d.errAt(path+".clear", "clear removes the hierarchy: give no ceil or classes")
		}
		return nil
	}
	if _, err := e.HTB(); err != nil {
		return v.d.errAt(path, "%v", err)
	}
	return nil
}

// HTB is the hierarchy an egress step installs.
func (e *Egress) HTB() (tc.HTB, error) {
	h := tc.HTB{Ceil: uint64(e.Ceil), QueueLen: e.QueueLen}
	for i, c := range e.Classes {
		if c.Prio < 0 {
			return h, fmt.Errorf("classes[%d].prio %d: must be 0-7", i, c.Prio)
		}
		tcc := tc.Class{Name: c.Name, Rate: uint64(c.Rate), Ceil: uint64(c.Ceil), Prio: uint32(c.Prio), Default: c.Default, DSCP: c.DSCP}
		for j, d := range c.Dst {
			pr, err := netip.ParsePrefix(d)
			if err != nil {
				return h, fmt.Errorf("classes[%d].dst[%d] %q: %w", i, j, d, err)
			}
			tcc.Dst = append(tcc.Dst, pr)
		}
		h.Classes = append(h.Classes, tcc)
	}
	return h, h.Validate()
}

// measure checks the flows as a start and a stop step of them, and each
// expectation.
func (v *validator) measure(s *Step, idx int, path string, st *stepState) error {
	m := s.Measure
	if err := v.traffic(m.Flows, true, idx, path+".measure.flows", st); err != nil {
		return err
	}
	if err := v.traffic(m.Flows, false, idx, path+".measure.flows", st); err != nil {
		return err
	}
	for i, x := range m.Expect {
		p := fmt.Sprintf("%s.measure.expect[%d]", path, i)
		switch {
		case !slices.Contains(m.Flows, x.Flow):
			return v.d.errAt(p+".flow", "flow %q is not measured in this step", x.Flow)
		case x.Delivered == nil && x.Loss == nil && x.DSCP == nil:
			return v.d.errAt(p, "expects nothing: give delivered, loss or dscp")
		case x.Delivered != nil && (x.Delivered.Min <= 0 || x.Delivered.Max < x.Delivered.Min):
			return v.d.errAt(p+".delivered", "needs min > 0 and max >= min (a two-sided range)")
		case x.Loss != nil && (x.Loss.Min < 0 || x.Loss.Max < x.Loss.Min || x.Loss.Max > 1):
			return v.d.errAt(p+".loss", "needs 0 <= min <= max <= 1")
		case x.DSCP != nil && (*x.DSCP < 0 || *x.DSCP > 63):
			return v.d.errAt(p+".dscp", "DSCP %d: must be 0-63", *x.DSCP)
		}
	}
	for i, c := range m.Classes {
		if err := v.classExpect(c, idx, fmt.Sprintf("%s.measure.classes[%d]", path, i)); err != nil {
			return err
		}
	}
	return nil
}

// classExpect checks that the class is in the hierarchy the last egress
// step before the measurement left on that port.
func (v *validator) classExpect(c ClassExpect, idx int, path string) error {
	if c.Drops.Min < 0 || c.Drops.Max < c.Drops.Min || c.Drops.Max > 1 {
		return v.d.errAt(path+".drops", "needs 0 <= min <= max <= 1")
	}
	for i := idx - 1; i >= 0; i-- {
		e := v.sc.Steps[i].Egress
		if e == nil || !SamePort(e.Port, c.Port) {
			continue
		}
		if !e.Clear && slices.ContainsFunc(e.Classes, func(x EgressClass) bool { return x.Name == c.Class }) {
			return nil
		}
		break
	}
	return v.d.errAt(path+".class", "no class %q is installed on that port at this step", c.Class)
}

// SamePort reports whether two ports name the same link.
func SamePort(a, b Port) bool {
	return a.Host == b.Host && (a.Uplink == nil) == (b.Uplink == nil) && (a.Uplink == nil || *a.Uplink == *b.Uplink)
}
