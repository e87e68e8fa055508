package ovntrace

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// StageHit is one logical flow the traced packet matched in one stage.
type StageHit struct {
	Table    int      `json:"table"`
	Stage    string   `json:"stage"`
	Source   string   `json:"source,omitempty"` // northd source line, e.g. northd.c:7022
	Match    string   `json:"match"`
	Priority int      `json:"priority"`
	UUID     string   `json:"uuid"` // short uuid as ovn-trace prints it
	Actions  []string `json:"actions"`
}

// IsQoS reports whether the hit is in one of OVN's QoS stages
// (ls_{in,out}_qos_mark and _qos_meter in 23.03, ls_{in,out}_qos later).
func (h StageHit) IsQoS() bool { return strings.Contains(h.Stage, "_qos") }

// Output is the port a pipeline delivered the packet to.
type Output struct {
	Port string `json:"port"`
	Type string `json:"type"` // LSP type: "" for a VIF, "localnet", ...
}

// Pipeline is one ingress or egress pass through a datapath.
type Pipeline struct {
	Kind     string     `json:"kind"` // "ingress" or "egress"
	Datapath string     `json:"datapath"`
	InPort   string     `json:"inport"`
	OutPort  string     `json:"outport,omitempty"`
	Parent   int        `json:"parent"` // index of the pipeline that fed this one; -1 for the first
	Stages   []StageHit `json:"stages"`
	Notes    []string   `json:"notes,omitempty"` // other ovn-trace comments
	Output   *Output    `json:"output,omitempty"`
}

// Marking is a DSCP decision: Set false means the packet keeps the DSCP
// it was sent with.
type Marking struct {
	Set   bool  `json:"set"`
	Value uint8 `json:"value"`
}

// Mark is the Marking of a packet set to DSCP v.
func Mark(v uint8) Marking { return Marking{Set: true, Value: v} }

// Wire is the DSCP the packet carries on the wire if it was sent with
// sent.
func (m Marking) Wire(sent uint8) uint8 {
	if m.Set {
		return m.Value
	}
	return sent
}

func (m Marking) String() string {
	if !m.Set {
		return "unmarked"
	}
	return "DSCP " + strconv.Itoa(int(m.Value))
}

// Meter is an OVN QoS meter: rate in kbps, burst in kilobits (zero when
// the row set no burst).
type Meter struct {
	Rate  uint64 `json:"rate"`
	Burst uint64 `json:"burst,omitempty"`
}

func (m Meter) String() string {
	if m.Burst == 0 {
		return fmt.Sprintf("meter %d kbps", m.Rate)
	}
	return fmt.Sprintf("meter %d kbps/%d kbit", m.Rate, m.Burst)
}

// Delivery is what OVN predicts for one copy of the packet that leaves
// by a port: the DSCP it carries, every meter along its path (ingress
// then egress) and the QoS stage rows it hit.
type Delivery struct {
	Output  Output     `json:"output"`
	DSCP    Marking    `json:"dscp"`
	Meters  []Meter    `json:"meters"`
	QoSHits []StageHit `json:"qosHits"`
}

// Prediction is ovn-trace's answer for one microflow.
type Prediction struct {
	Flow       Microflow  `json:"-"`
	Expr       string     `json:"expr,omitempty"`
	OpenFlow   string     `json:"openflow"` // the "# ..." flow line ovn-trace resolved
	Pipelines  []Pipeline `json:"pipelines"`
	Deliveries []Delivery `json:"deliveries"`
	Raw        string     `json:"-"` // ovn-trace --detailed stdout, for the report
}

// Egress is the delivery the capture on the uplink judges: the one to a
// localnet port, or else the only delivery. ok is false when the packet
// is dropped, flooded to no localnet port, or leaves by several
// localnet ports.
func (p Prediction) Egress() (d Delivery, ok bool) {
	var local []Delivery
	for _, d := range p.Deliveries {
		if d.Output.Type == "localnet" {
			local = append(local, d)
		}
	}
	switch {
	case len(local) == 1:
		return local[0], true
	case len(local) == 0 && len(p.Deliveries) == 1:
		return p.Deliveries[0], true
	}
	return Delivery{}, false
}

// deliveries derives one Delivery per pipeline that output the packet.
func deliveries(pipes []Pipeline) ([]Delivery, error) {
	var out []Delivery
	for i, p := range pipes {
		if p.Output == nil {
			continue
		}
		d := Delivery{Output: *p.Output, Meters: []Meter{}, QoSHits: []StageHit{}}
		for _, j := range pathTo(pipes, i) {
			if err := d.apply(pipes[j].Stages); err != nil {
				return nil, fmt.Errorf("%s pipeline %s->%s: %w", pipes[j].Kind, pipes[j].InPort, pipes[j].OutPort, err)
			}
		}
		out = append(out, d)
	}
	return out, nil
}

// pathTo lists pipeline indexes from the first one down to i.
func pathTo(pipes []Pipeline, i int) []int {
	var path []int
	for j := i; j >= 0 && len(path) <= len(pipes); j = pipes[j].Parent {
		path = append(path, j)
	}
	slices.Reverse(path)
	return path
}

func (d *Delivery) apply(stages []StageHit) error {
	for _, s := range stages {
		if s.IsQoS() {
			d.QoSHits = append(d.QoSHits, s)
		}
		for _, a := range s.Actions {
			if err := d.applyAction(a); err != nil {
				return fmt.Errorf("stage %s priority %d: %w", s.Stage, s.Priority, err)
			}
		}
	}
	return nil
}

func (d *Delivery) applyAction(a string) error {
	if v, ok := strings.CutPrefix(a, "ip.dscp = "); ok {
		n, err := strconv.ParseUint(strings.TrimSuffix(v, ";"), 10, 8)
		if err != nil || n > 63 {
			return fmt.Errorf("action %q: DSCP is not 0..63", a)
		}
		d.DSCP = Mark(uint8(n))
		return nil
	}
	if args, ok := strings.CutPrefix(a, "set_meter("); ok {
		m, err := parseMeter(strings.TrimSuffix(args, ");"))
		if err != nil {
			return fmt.Errorf("action %q: %w", a, err)
		}
		d.Meters = append(d.Meters, m)
	}
	return nil
}

// parseMeter parses set_meter's arguments: "rate" or "rate, burst".
func parseMeter(args string) (Meter, error) {
	parts := strings.Split(args, ",")
	if len(parts) > 2 {
		return Meter{}, fmt.Errorf("set_meter has %d arguments, want 1 or 2", len(parts))
	}
	var vals [2]uint64
	for i, p := range parts {
		v, err := strconv.ParseUint(strings.TrimSpace(p), 10, 64)
		if err != nil || v == 0 {
			return Meter{}, fmt.Errorf("set_meter argument %q is not a positive integer", p)
		}
		vals[i] = v
	}
	return Meter{Rate: vals[0], Burst: vals[1]}, nil
}
