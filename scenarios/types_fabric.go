package scenarios

import (
	"fmt"
	"strings"
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
