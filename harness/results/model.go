// Package results owns the result model of a scenario run: what the
// runner of package harness fills (scenarios, steps with their measures,
// flows with their verdicts, conditions, NB rows, logs) and what package
// reports renders. It imports nothing above it: the verdicts it stores
// come from package harness/verdict.
package results

import (
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/nqos/nqos/harness/verdict"
	"github.com/nqos/nqos/internal/qos"
)

// Status is the outcome of a scenario or step.
type Status string

// Outcomes.
const (
	Pass    Status = "pass"
	Fail    Status = "fail"
	Error   Status = "error" // the environment failed, not an expectation
	Skipped Status = "skipped"
	NotRun  Status = "not-run"
	// Unsupported: a step needs what the environment's backend cannot do
	// (e.g. a multi-chassis migration on a KinD cluster); neither a pass
	// nor a failure of the feature.
	Unsupported Status = "unsupported"
	// Interrupted: the run was stopped (Ctrl-C) before the scenario
	// finished, or before it started; not a verdict on the feature.
	Interrupted Status = "interrupted"
)

// Run is one invocation of the scenario runner.
type Run struct {
	ID         string    `json:"id"`
	Started    time.Time `json:"started"`
	Finished   time.Time `json:"finished"`
	Host       string    `json:"host"`
	IPFamily   string    `json:"ipFamily"`
	OVNVersion string    `json:"ovnVersion"`
	// Backend is the environment the scenarios ran on: "embedded" (the
	// localnet testbed in namespaces) or "kind" (a KinD cluster).
	Backend string `json:"backend,omitempty"`
	// Topology is OVN's control-plane layout the scenarios ran on:
	// "central" (one NB, SB and northd) or "interconnect" (a zone per node).
	Topology  string     `json:"topology,omitempty"`
	Scenarios []Scenario `json:"scenarios"`
}

// Zone is one OVN zone of a scenario's testbed: its nodes and NB address.
type Zone struct {
	Name  string   `json:"name"`
	Nodes []string `json:"nodes"`
	NB    string   `json:"nb"`
}

// Scenario is the result of one scenario in one IP-family mode.
type Scenario struct {
	Name       string   `json:"name"`
	Title      string   `json:"title"`
	File       string   `json:"file"`
	Families   []string `json:"families"`
	Status     Status   `json:"status"`
	Error      string   `json:"error,omitempty"`
	Notes      []string `json:"notes,omitempty"`
	OVNVersion string   `json:"ovnVersion,omitempty"`
	// Topology and Zones: the control-plane layout of the scenario's
	// testbed and each zone's nodes and NB address.
	Topology   string      `json:"topology,omitempty"`
	Zones      []Zone      `json:"zones,omitempty"`
	Started    time.Time   `json:"started"`
	Finished   time.Time   `json:"finished"`
	Steps      []Step      `json:"steps"`
	Flows      []Flow      `json:"flows"`
	Conditions []Condition `json:"conditions"`
	Violations []string    `json:"violations,omitempty"`
	// NBChecks is how many committed NB states the invariant watcher
	// audited (0: the scenario does not watch).
	NBChecks int `json:"nbChecks,omitempty"`
	// FailedProperties are the properties the scenario failed on, sorted,
	// without spaces (dscp, nb-rows, conditions, nb-audit, three-way...).
	FailedProperties []verdict.Property `json:"failedProperties,omitempty"`
	NBBefore         qos.Desired        `json:"nbBefore"`
	NBAfter          qos.Desired        `json:"nbAfter"`
	Logs             []Log              `json:"logs,omitempty"`
	SkipReason       string             `json:"skipReason,omitempty"`
	Description      string             `json:"description,omitempty"`
	// Tables are the tables the scenario's steps computed (table.go).
	Tables []Table `json:"tables,omitempty"`
}

// ID names the scenario run, e.g. "story1-tiers [v4]".
func (s Scenario) ID() string { return s.Name + " [" + strings.Join(s.Families, "+") + "]" }

// Duration is the scenario's wall time.
func (s Scenario) Duration() time.Duration { return s.Finished.Sub(s.Started) }

// Step is one executed step.
type Step struct {
	Index    int       `json:"index"`
	Line     int       `json:"line"`
	Kind     string    `json:"kind"`
	Summary  string    `json:"summary"`
	Status   Status    `json:"status"`
	Error    string    `json:"error,omitempty"`
	Started  time.Time `json:"started"`
	Finished time.Time `json:"finished"`
	// Measures are the figures a lifecycle step measured.
	Measures []Measure `json:"measures,omitempty"`
	// Verdicts are the step's own checks on what it measured (a
	// lifecycle probe's unmarked packets, loss, marking gap).
	Verdicts []verdict.Verdict `json:"verdicts,omitempty"`
	// Detail is a lifecycle operation's full typed result.
	Detail any `json:"detail,omitempty"`
}

// Measure is one figure a lifecycle step measured: a duration (e.g. from
// a VM's LSP creation to its port-group membership) or, with a Unit, a
// count (e.g. probe packets lost).
type Measure struct {
	Name     string        `json:"name"`
	Duration time.Duration `json:"durationNs,omitempty"`
	Count    int           `json:"count,omitempty"`
	Unit     string        `json:"unit,omitempty"` // set for counts
	Note     string        `json:"note,omitempty"`
}

// Duration is the step's wall time.
func (s Step) Duration() time.Duration { return s.Finished.Sub(s.Started) }

// Flow is one measured flow in one family.
type Flow struct {
	Name         string            `json:"name"`
	Family       string            `json:"family"`
	From         string            `json:"from"`
	To           string            `json:"to"`
	Protocol     string            `json:"protocol"`
	Port         int               `json:"port"`
	Tool         string            `json:"tool"`
	Node         int               `json:"node"`
	OfferedBps   float64           `json:"offeredBps"`
	Duration     time.Duration     `json:"duration"`
	Expectations []string          `json:"expectations"`
	WantDSCP     *int              `json:"wantDSCP,omitempty"`
	WantUnmarked bool              `json:"wantUnmarked,omitempty"`
	Packets      uint64            `json:"packets"`
	Bytes        uint64            `json:"bytes"`
	DSCP         []DSCPCount       `json:"dscp"`
	RateWindow   time.Duration     `json:"rateWindow"`
	Rate         []float64         `json:"rate"` // bit/s per window from the first frame
	Policer      *Policer          `json:"policer,omitempty"`
	Pcap         string            `json:"pcap,omitempty"` // relative to the report
	Verdicts     []verdict.Verdict `json:"verdicts"`
	ThreeWay     *ThreeWay         `json:"threeWay,omitempty"`
	// Notes say what the traffic sender retried (e.g. a lost iperf3
	// handshake); the verdicts judge the flow as captured.
	Notes []string `json:"notes,omitempty"`
}

// ThreeWay is the simulation tier of a flow: what the compiled intent,
// OVN's own prediction (ovn-trace) and the uplink capture each say.
type ThreeWay struct {
	Microflow string   `json:"microflow"`
	Intent    string   `json:"intent"`
	IntentRow []string `json:"intentRows,omitempty"` // the winning rows
	Trace     string   `json:"trace"`
	Capture   string   `json:"capture"`
	Agree     bool     `json:"agree"`
	Detail    string   `json:"detail,omitempty"` // the disagreement or why a leg is missing
	// Predicted is the trace leg in typed form: nil when ovn-trace gave
	// no single egress delivery.
	Predicted *Predicted `json:"predicted,omitempty"`
}

// Predicted is what ovn-trace predicts on the egress delivery: the DSCP
// (nil: unmarked) and whether a meter polices it.
type Predicted struct {
	DSCP    *int `json:"dscp"`
	Metered bool `json:"metered"`
}

// Pass reports whether every verdict of the flow passed.
func (f Flow) Pass() bool {
	return len(f.Verdicts) > 0 && !slices.ContainsFunc(f.Verdicts, func(v verdict.Verdict) bool { return !v.Pass })
}

// DSCPCount is one histogram bin.
type DSCPCount struct {
	DSCP    int    `json:"dscp"`
	Packets uint64 `json:"packets"`
}

// Histogram turns a DSCP -> packets map into sorted bins.
func Histogram(m map[int]uint64) []DSCPCount {
	out := make([]DSCPCount, 0, len(m))
	for _, d := range slices.Sorted(maps.Keys(m)) {
		out = append(out, DSCPCount{DSCP: d, Packets: m[d]})
	}
	return out
}

// Policer is the meter a flow was judged against.
type Policer struct {
	Meter     string  `json:"meter"` // flows with the same meter share it
	RateBps   float64 `json:"rateBps"`
	BurstBits float64 `json:"burstBits"`
}

// Condition is a status condition observed on an object during a step.
type Condition struct {
	Step   int           `json:"step"`
	Object string        `json:"object"`
	Cond   qos.Condition `json:"condition"`
}

// Log is a daemon log (tail) attached on failure.
type Log struct {
	Name string `json:"name"`
	Text string `json:"text"`
}

// Counts summarises a run.
type Counts struct{ Total, Passed, Failed, Errored, Skipped, Unsupported, Interrupted int }

// Summary counts the scenarios of the run by status.
func (r *Run) Summary() Counts {
	var c Counts
	for _, s := range r.Scenarios {
		c.Total++
		switch s.Status {
		case Pass:
			c.Passed++
		case Fail:
			c.Failed++
		case Error:
			c.Errored++
		case Unsupported:
			c.Unsupported++
		case Interrupted:
			c.Interrupted++
		default:
			c.Skipped++
		}
	}
	return c
}

// OK reports whether no scenario failed, errored or was interrupted.
func (r *Run) OK() bool {
	c := r.Summary()
	return c.Failed == 0 && c.Errored == 0 && c.Interrupted == 0
}
