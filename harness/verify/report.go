package verify

import (
	"cmp"
	"fmt"
	"github.com/nqos/nqos/internal/intent"
	"math"
	"slices"
	"strconv"

	"github.com/nqos/nqos/harness/results"
	"github.com/nqos/nqos/harness/verdict"
)

// Report is the verify report; its JSON form is `verify -o json`.
type Report struct {
	OVNVersion string        `json:"ovnVersion"`
	Shadowed   []Shadowed    `json:"shadowed"`
	Probes     []ProbeResult `json:"probes"`
	Summary    Summary       `json:"summary"`
	// Failures explain each disagreement (text output and HTML only).
	Failures []string `json:"-"`
}

// ClassRef names a probed class in the reports: the sending VM, the
// family, the destination and the protocol with its port (nil for ICMP).
type ClassRef struct {
	VM       string `json:"vm"`
	Family   Family `json:"family"`
	Dst      string `json:"dst"`
	Protocol string `json:"protocol"`
	Port     *int   `json:"port"`
}

func (c ClassRef) protoPort() string { return intent.ProtoPort(c.Protocol, c.Port) }

// ProbeResult is one class judged three ways.
type ProbeResult struct {
	ClassRef
	Intent Intent `json:"intent"`
	// Sharing is the meter's sharing on the VM's node (metered classes).
	Sharing *intent.Share `json:"sharing,omitempty"`
	Trace   *Trace        `json:"trace"`
	Wire    Wire          `json:"wire"`
	Agree   bool          `json:"agree"`
	Why     string        `json:"-"`
}

// Trace is ovn-trace's prediction for the class's first packet, as the
// run's three-way judgement of the probe flow holds it.
type Trace = results.Predicted

// Wire is what the capture on the sending node's uplink saw.
type Wire struct {
	Packets uint64            `json:"packets"`
	DSCP    map[string]uint64 `json:"dscp"`
	Policed *Policed          `json:"policed,omitempty"`
}

// Policed is a metered class's overload: offered (nil when the sender
// had no fixed rate) and delivered on the uplink (steady state).
type Policed struct {
	OfferedKbps   *float64 `json:"offeredKbps"`
	DeliveredKbps float64  `json:"deliveredKbps"`
}

// Full is a report with its disagreement reasons and per-probe details, as
// one OVN version's run hands it to a run over several versions.
type Full struct {
	Report
	Failures []string `json:"failures"`
	Why      []string `json:"why"` // per probe
	// MeterRules are the probes' meter rules, Consequences the shadowed
	// rules' consequences.
	MeterRules   []string `json:"meterRules"`
	Consequences []string `json:"consequences"`
}

// Full is r with the fields its JSON form leaves out.
func (r *Report) Full() Full {
	f := Full{Report: *r, Failures: r.Failures}
	for _, p := range r.Probes {
		f.Why, f.MeterRules = append(f.Why, p.Why), append(f.MeterRules, p.Intent.MeterRule)
	}
	for _, s := range r.Shadowed {
		f.Consequences = append(f.Consequences, s.Consequence)
	}
	return f
}

// Restore is the report a Full carries.
func (f Full) Restore() *Report {
	r := f.Report
	r.Failures = f.Failures
	r.Probes, r.Shadowed = slices.Clone(r.Probes), slices.Clone(r.Shadowed)
	for i := range r.Probes {
		if i < len(f.Why) && i < len(f.MeterRules) {
			r.Probes[i].Why, r.Probes[i].Intent.MeterRule = f.Why[i], f.MeterRules[i]
		}
	}
	for i := range r.Shadowed {
		if i < len(f.Consequences) {
			r.Shadowed[i].Consequence = f.Consequences[i]
		}
	}
	return &r
}

// Summary counts the probes and those whose three legs agree.
type Summary struct {
	Probes int `json:"probes"`
	Agree  int `json:"agree"`
}

// OK reports whether every probe agrees.
func (r *Report) OK() bool { return r.Summary.Probes > 0 && r.Summary.Agree == r.Summary.Probes }

// FromResults judges each probe of plan from the run's flows: a probe
// agrees when its flow's three-way check agreed and every verdict on its
// flow and on its overload passed. A flow missing from the run is a
// disagreement, never a pass.
func FromResults(plan *Plan, run *results.Run) (*Report, error) {
	if len(run.Scenarios) != 1 {
		return nil, fmt.Errorf("verify: %d scenario results, want 1", len(run.Scenarios))
	}
	sc := run.Scenarios[0]
	rep := &Report{OVNVersion: run.OVNVersion, Shadowed: append([]Shadowed{}, plan.Shadowed...), Probes: []ProbeResult{}}
	if sc.Error != "" {
		rep.Failures = append(rep.Failures, "run: "+sc.Error)
	}
	flows := map[string]results.Flow{}
	for _, f := range sc.Flows {
		flows[f.Name] = f
	}
	for _, p := range plan.Probes {
		pr, why := probeResult(p, flows)
		if pr.Agree {
			rep.Summary.Agree++
		} else {
			rep.Failures = append(rep.Failures, fmt.Sprintf("%s %s %s %s: %s", pr.VM, pr.Family, pr.Dst, pr.protoPort(), why))
		}
		rep.Probes = append(rep.Probes, pr)
	}
	slices.SortFunc(rep.Probes, compareProbe)
	rep.Summary.Probes = len(rep.Probes)
	return rep, nil
}

func compareProbe(a, b ProbeResult) int {
	return cmp.Or(cmp.Compare(a.VM, b.VM), cmp.Compare(a.Family, b.Family), cmp.Compare(a.Dst, b.Dst),
		cmp.Compare(a.Protocol, b.Protocol), cmp.Compare(deref(a.Port), deref(b.Port)))
}

func deref(p *int) int {
	if p == nil {
		return -1
	}
	return *p
}

func probeResult(p Probe, flows map[string]results.Flow) (ProbeResult, string) {
	pr := ProbeResult{ClassRef: ClassRef{VM: p.VM, Family: p.Family, Dst: p.Dst.String(), Protocol: p.Protocol}, Intent: p.Intent,
		Sharing: p.Sharing, Wire: Wire{DSCP: map[string]uint64{}}, Why: p.Why}
	if p.Protocol != "icmp" {
		port := p.Port
		pr.Port = &port
	}
	f, ok := flows[p.Flow]
	if !ok {
		return pr, "probe flow " + p.Flow + " did not run"
	}
	pr.Wire.Packets = f.Packets
	for _, c := range f.DSCP {
		pr.Wire.DSCP[strconv.Itoa(c.DSCP)] = c.Packets
	}
	if tw := f.ThreeWay; tw != nil && tw.Predicted != nil {
		t := *tw.Predicted
		pr.Trace = &t
	}
	why := judged(f)
	if p.Overload != "" {
		o, ok := flows[p.Overload]
		if !ok {
			return pr, "overload flow " + p.Overload + " did not run"
		}
		pr.Wire.Policed = policed(o)
		if w := judged(o); w != "" && why == "" {
			why = "overload: " + w
		}
	}
	pr.Agree = why == ""
	return pr, why
}

// judged is "" when the flow's three-way check agreed and every verdict
// passed, else the first reason it did not.
func judged(f results.Flow) string {
	if f.ThreeWay == nil {
		return "no three-way judgement"
	}
	if !f.ThreeWay.Agree {
		return f.ThreeWay.Detail
	}
	if !f.Pass() {
		for _, v := range f.Verdicts {
			if !v.Pass {
				return v.Message
			}
		}
		return "no verdict"
	}
	return ""
}

func policed(f results.Flow) *Policed {
	steady, _ := verdict.SteadyRate(f.Rate)
	p := &Policed{DeliveredKbps: math.Round(steady/100) / 10}
	if f.OfferedBps > 0 {
		o := f.OfferedBps / 1000
		p.OfferedKbps = &o
	}
	return p
}
