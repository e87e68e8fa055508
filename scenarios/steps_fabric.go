package scenarios

import (
	"fmt"
	"net/netip"
	"strings"

	"github.com/nqos/nqos/internal/tc"
)

// FabricSteps are the step kinds acting on the testbed's fabric: traffic
// control on its links (egress), an untrusted fabric edge
// (trustBoundary), flows measured where they are delivered (measure) and
// the tc HTB lab's comparison table (labTable).
type FabricSteps struct {
	Egress        *Egress        `yaml:"egress"`
	TrustBoundary *TrustBoundary `yaml:"trustBoundary"`
	Measure       *Measure       `yaml:"measure"`
	LabTable      *LabTable      `yaml:"labTable"`
}

// Egress installs an HTB hierarchy on a port's egress (replacing the one
// there), or with Clear removes it. Every hierarchy left installed is
// removed when the scenario ends, whatever its outcome.
type Egress struct {
	Port    Port          `yaml:"port,required"`
	Clear   bool          `yaml:"clear"`
	Ceil    Bitrate       `yaml:"ceil"` // the root class: the emulated link rate
	Classes []EgressClass `yaml:"classes"`
	// QueueLen is every class's queue length in packets (0: the link's
	// txqueuelen, 1000 on the testbed's veths). The fabric's OVS sends
	// through an AF_PACKET socket whose buffer holds about a hundred
	// frames: queues shorter than that put the drops in the classes.
	QueueLen int `yaml:"queueLen"`
}

// Port is a shaped link: the node side of a node's uplink (what the node
// sends into the fabric) or the fabric's port towards an external host
// (what the fabric delivers to it). Exactly one is set.
type Port struct {
	Uplink *int   `yaml:"uplink"` // node index
	Host   string `yaml:"host"`
}

// EgressClass is one HTB leaf class: a guaranteed rate, a ceiling (default
// the root's), HTB's priority level (0 first) and what it selects:
// destination prefixes (u32 on the destination address), DSCP values (u32
// on the DS field) or, for the one default class, everything else.
type EgressClass struct {
	Name    string   `yaml:"name,required"`
	Rate    Bitrate  `yaml:"rate,required"`
	Ceil    Bitrate  `yaml:"ceil"`
	Prio    int      `yaml:"prio"`
	Default bool     `yaml:"default"`
	Dst     []string `yaml:"dst"` // CIDRs
	DSCP    []int    `yaml:"dscp"`
}

// TrustBoundary makes the fabric rewrite DSCP to 0 on every packet
// entering it from a node's uplink, or with Clear trust that uplink again.
type TrustBoundary struct {
	Uplink int  `yaml:"uplink"` // node index
	Clear  bool `yaml:"clear"`
}

// LabTable puts the tc HTB lab's measurements next to its published
// figures, as ratios of the ceiling: each class alone against the
// ceiling, together against each class's guarantee, combined against the
// ceiling. Its rows name measured flows (of earlier measure steps).
type LabTable struct {
	Ceiling    Bitrate  `yaml:"ceiling,required"`
	Production Bitrate  `yaml:"production,required"` // guarantee
	Background Bitrate  `yaml:"background,required"` // guarantee
	Rows       []LabRow `yaml:"rows,required"`
}

// LabRow is one approach's four measurements.
type LabRow struct {
	Approach           string `yaml:"approach,required"`
	ProductionAlone    string `yaml:"productionAlone,required"`
	BackgroundAlone    string `yaml:"backgroundAlone,required"`
	ProductionTogether string `yaml:"productionTogether,required"`
	BackgroundTogether string `yaml:"backgroundTogether,required"`
	Note               string `yaml:"note"`
}

func (e *Egress) validate(v *validator, at stepAt) error {
	path := at.path
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

// Name names the port's link.
func (p Port) Name() string {
	if p.Uplink != nil {
		return fmt.Sprintf("node %d uplink", *p.Uplink)
	}
	return "fabric port to " + p.Host
}

// SamePort reports whether two ports name the same link.
func SamePort(a, b Port) bool {
	return a.Host == b.Host && (a.Uplink == nil) == (b.Uplink == nil) && (a.Uplink == nil || *a.Uplink == *b.Uplink)
}

func (t *TrustBoundary) validate(v *validator, at stepAt) error {
	return v.uplinkIndex(t.Uplink, at.path+".uplink")
}

// Describe: what the fabric does to the uplink's packets.
func (t *TrustBoundary) Describe(*Step) string {
	if t.Clear {
		return fmt.Sprintf("fabric trusts node %d's uplink again", t.Uplink)
	}
	return fmt.Sprintf("fabric rewrites DSCP to 0 on packets from node %d's uplink", t.Uplink)
}

// Flows are the flows a lab row names, in the table's column order.
func (r LabRow) Flows() []string {
	return []string{r.ProductionAlone, r.BackgroundAlone, r.ProductionTogether, r.BackgroundTogether}
}

// validate checks that every flow a row names was measured by an
// earlier measure step.
func (t *LabTable) validate(v *validator, at stepAt) error {
	for _, b := range []struct {
		field string
		rate  Bitrate
	}{{"ceiling", t.Ceiling}, {"production", t.Production}, {"background", t.Background}} {
		if b.rate <= 0 {
			return v.d.errAt(at.path+"."+b.field, "must be above 0")
		}
	}
	measured := map[string]bool{}
	for _, s := range v.sc.Steps[:at.idx] {
		if s.Measure != nil {
			for _, f := range s.Measure.Flows {
				measured[f] = true
			}
		}
	}
	for i, r := range t.Rows {
		for _, f := range r.Flows() {
			if !measured[f] {
				return v.d.errAt(fmt.Sprintf("%s.rows[%d]", at.path, i), "flow %q is not measured by an earlier measure step", f)
			}
		}
	}
	return nil
}

// Describe: the approaches the table compares.
func (t *LabTable) Describe(*Step) string {
	var names []string
	for _, r := range t.Rows {
		names = append(names, r.Approach)
	}
	return "lab table: " + strings.Join(names, " vs ")
}
