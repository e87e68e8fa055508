package scenarios

import (
	"fmt"
	"slices"
	"strings"
)

// Measure runs flows together like a start and stop step, and also
// captures each flow where it is delivered (the destination VM's NIC or
// host's port): what arrived, at what rate, with which DSCP, and the loss
// between the sending node's uplink and the destination.
type Measure struct {
	Flows  []string          `yaml:"flows,required"`
	Expect []DeliveredExpect `yaml:"expect"`
	// Classes bound what shaped classes dropped during the measurement.
	Classes []ClassExpect `yaml:"classes"`
}

// ClassExpect bounds the fraction of a shaped class's packets (sent plus
// dropped during the step) that its queue dropped: where the link, not
// the testbed around it, decided a packet's fate.
type ClassExpect struct {
	Port  Port     `yaml:"port,required"`
	Class string   `yaml:"class,required"`
	Drops Fraction `yaml:"drops,required"`
	Why   string   `yaml:"why"`
}

// DeliveredExpect bounds what the destination received of one flow.
type DeliveredExpect struct {
	Flow string `yaml:"flow,required"`
	// Delivered bounds the steady delivered rate (min and max required).
	Delivered *Throughput `yaml:"delivered"`
	// Loss bounds the fraction of the flow's packets seen on the uplink
	// that did not arrive (max required).
	Loss *Fraction `yaml:"loss"`
	// DSCP is the DSCP every delivered packet carries.
	DSCP *int   `yaml:"dscp"`
	Why  string `yaml:"why"`
}

// Fraction is a range of a fraction (0-1).
type Fraction struct {
	Min float64 `yaml:"min"`
	Max float64 `yaml:"max,required"`
}

// measure checks the flows as a start and a stop step of them, and each
// expectation.
func (m *Measure) validate(v *validator, at stepAt) error {
	idx, path, st := at.idx, at.stepPath, at.st
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
		if err := c.validate(v, idx, fmt.Sprintf("%s.measure.classes[%d]", path, i)); err != nil {
			return err
		}
	}
	return nil
}

// validate checks that the class is in the hierarchy the last egress
// step before the measurement left on that port.
func (c ClassExpect) validate(v *validator, idx int, path string) error {
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

// Describe: the flows.
func (m *Measure) Describe(*Step) string {
	return strings.Join(m.Flows, ", ") + ", measured on the uplink and where delivered"
}
