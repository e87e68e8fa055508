package harness

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strings"

	"github.com/nqos/nqos/capture"
	"github.com/nqos/nqos/flow"
	"github.com/nqos/nqos/harness/results"
	"github.com/nqos/nqos/harness/verdict"
	"github.com/nqos/nqos/internal/bitrate"
	"github.com/nqos/nqos/scenarios"
)

// group is a set of flows started in one step. In a dual-stack run its
// runs are split into one wave per IP family, run one after the other, so
// the families do not compete for the CPU and share no meter.
type group struct {
	flows   []*scenarios.Flow
	waves   []wave
	handle  Running
	started bool
}

// wave is the runs of one family of a group.
type wave struct {
	runs  []FlowRun
	plans []*plan // parallel to runs
}

// plan is what the harness itself checks on a run, beyond the capture
// verdicts, and how the flow is described in the report.
type plan struct {
	flow       *scenarios.Flow
	throughput []scenarios.Throughput
	texts      []string
}

func (ex *execution) start(ctx context.Context, step int, names []string) error {
	ws, err := ex.waves(names, step)
	if err != nil {
		return err
	}
	g := &group{waves: ws}
	for _, name := range names {
		g.flows = append(g.flows, ex.sc.Flow(name))
		ex.running[name] = g
	}
	if len(g.waves) == 0 {
		return nil // every flow is outside the run's IP families
	}
	return ex.startWave(ctx, g)
}

// waves prepares the flows names in each IP family of the run: one wave
// per family any of them runs in.
func (ex *execution) waves(names []string, step int) ([]wave, error) {
	var ws []wave
	for _, fam := range ex.fams {
		var w wave
		for _, name := range names {
			run, p, ok, err := ex.buildRun(ex.sc.Flow(name), fam, step)
			if err != nil {
				return nil, err
			}
			if ok {
				w.runs, w.plans = append(w.runs, run), append(w.plans, p)
			}
		}
		if len(w.runs) > 0 {
			ws = append(ws, w)
		}
	}
	return ws, nil
}

func (ex *execution) startWave(ctx context.Context, g *group) error {
	h, err := ex.env.Start(ctx, g.waves[0].runs)
	if err != nil {
		var names []string
		for _, r := range g.waves[0].runs {
			names = append(names, r.Name)
		}
		return fmt.Errorf("start flows %s: %w", strings.Join(names, ", "), err)
	}
	g.handle, g.started = h, true
	return nil
}

func (ex *execution) stop(ctx context.Context, names []string) error {
	var err error
	for _, name := range names {
		if g := ex.running[name]; g != nil {
			err = cmp.Or(err, ex.finish(ctx, g))
		}
	}
	return err
}

// finishAll finishes groups left running after a failed step and
// returns their errors (the step's own failure is already recorded).
func (ex *execution) finishAll(ctx context.Context) error {
	var errs []error
	for _, name := range slices.Sorted(maps.Keys(ex.running)) {
		if g, ok := ex.running[name]; ok { // finishing a group removes all its flows
			errs = append(errs, ex.finish(ctx, g))
		}
	}
	return errors.Join(errs...)
}

// finish finishes the running wave and runs the remaining ones.
func (ex *execution) finish(ctx context.Context, g *group) error {
	for _, f := range g.flows {
		delete(ex.running, f.Name)
	}
	for g.started {
		g.started = false
		w := g.waves[0]
		g.waves = g.waves[1:]
		ms, err := g.handle.Finish(ctx)
		if err != nil {
			return fmt.Errorf("finish flows: %w", err)
		}
		if len(ms) != len(w.runs) {
			return fmt.Errorf("finish flows: %d measurements for %d flows", len(ms), len(w.runs))
		}
		judged := judgeWave(w.runs, ms)
		for i, run := range w.runs {
			fr := ex.flowResult(run, w.plans[i], ms[i], judged[i])
			if tw, v := ex.threeWay(ctx, run, ms[i]); tw != nil {
				fr.ThreeWay, fr.Verdicts = tw, append(fr.Verdicts, *v)
			}
			ex.r.Progress.FlowDone(ex.res.ID(), fr)
			ex.res.Flows = append(ex.res.Flows, fr)
		}
		if len(g.waves) > 0 && ctx.Err() == nil {
			if err := ex.startWave(ctx, g); err != nil {
				return err
			}
		}
	}
	return nil
}

// peer returns the addresses of a VM or host.
func (ex *execution) peer(name string) scenarios.Addresses {
	if vm := ex.sc.VM(name); vm != nil {
		return vm.Addresses
	}
	if h := ex.sc.Host(name); h != nil {
		return h.Addresses
	}
	return scenarios.Addresses{}
}

// buildRun prepares a flow in one IP family (ok false: the flow does not
// run in it). Runs of one wave from one node share that node's uplink
// capture.
func (ex *execution) buildRun(f *scenarios.Flow, fam scenarios.Family, step int) (FlowRun, *plan, bool, error) {
	if !slices.Contains(ex.sc.RunFamilies(f), fam) {
		return FlowRun{}, nil, false, nil
	}
	from := ex.sc.VM(f.From)
	src, dst, err := ex.runAddrs(f, fam)
	if err != nil {
		return FlowRun{}, nil, false, err
	}
	network := ex.sc.FlowNetwork(f)
	spec := flow.Spec{
		Name: f.Name + "/" + string(fam), From: f.From, To: f.To,
		SrcIP: src, DstIP: dst,
		Protocol: flow.Protocol(f.Protocol), DstPort: uint16(f.Port),
		Family: flowFamily(fam), VLAN: ex.sc.Network(network).VLAN,
		Rate: uint64(f.Rate), Duration: f.Duration,
	}
	fromNIC, _, _ := from.NIC(network)
	var toNIC int
	if peer := ex.sc.VM(f.To); peer != nil {
		toNIC, _, _ = peer.NIC(network)
	}
	node := ex.world.Node(from.Name) // where the VM runs now
	exp, p, floor, err := ex.expectation(f, fam, node)
	if err != nil {
		return FlowRun{}, nil, false, err
	}
	return FlowRun{Name: spec.Name, Spec: spec, Expect: exp, Tool: f.Tool, Node: node, Floor: floor, Payload: f.Payload,
		Network: network, FromNIC: fromNIC, ToNIC: toNIC,
		Pcap: ex.pcap(step, fmt.Sprintf("node%d-%s", node, fam))}, p, true, nil
}

// pcap is the path of a capture file of step (index) in the scenario's
// output directory; what says where it captures.
func (ex *execution) pcap(step int, what string) string {
	return filepath.Join(ex.dir, fmt.Sprintf("step%02d-%s.pcap", step+1, what))
}

func flowFamily(f scenarios.Family) flow.Family {
	if f == scenarios.V6 {
		return flow.IPv6
	}
	return flow.IPv4
}

// expectation merges the expectations in force on this OVN version.
func (ex *execution) expectation(f *scenarios.Flow, fam scenarios.Family, node int) (flow.Expect, *plan, float64, error) {
	var e flow.Expect
	p := &plan{flow: f}
	floor := 1 - scenarios.DefaultBelow
	for _, x := range f.Expect {
		if !x.Applies(ex.ovn, fam) {
			continue
		}
		if x.DSCP != nil {
			if e.DSCP != nil && *e.DSCP != *x.DSCP {
				return e, nil, 0, fmt.Errorf("flow %s: DSCP %d and %d both expected on OVN %s", f.Name, *e.DSCP, *x.DSCP, ex.ovn)
			}
			e.DSCP = flow.DSCPValue(*x.DSCP)
		}
		e.Unmarked = e.Unmarked || x.Unmarked
		e.Undelivered = e.Undelivered || x.Undelivered
		if pb := x.PolicedBy; pb != nil {
			e.MaxRateKbps, e.BurstKbits = uint64(pb.RateKbps), uint64(pb.BurstKbit)
			e.Meter = fmt.Sprintf("%s/rule%d/node%d", pb.Manifest, pb.Rule, node)
			if pb.PerPort {
				e.Meter += "/vm/" + f.From
			}
			floor = 1 - pb.Below
		}
		if x.Throughput != nil {
			p.throughput = append(p.throughput, *x.Throughput)
		}
		p.texts = append(p.texts, describeExpect(f, x))
	}
	if e.DSCP != nil && e.Unmarked {
		return e, nil, 0, fmt.Errorf("flow %s: both DSCP %d and unmarked expected on OVN %s", f.Name, *e.DSCP, ex.ovn)
	}
	if e.Undelivered && (e.DSCP != nil || e.Unmarked || e.Policed() || len(p.throughput) > 0) {
		return e, nil, 0, fmt.Errorf("flow %s: undelivered and a mark, meter or throughput expected on OVN %s", f.Name, ex.ovn)
	}
	return e, p, floor, nil
}

func describeExpect(f *scenarios.Flow, x scenarios.FlowExpect) string {
	var parts []string
	if x.When != nil {
		parts = append(parts, "on "+x.When.String()+":")
	}
	if x.DSCP != nil {
		parts = append(parts, fmt.Sprintf("DSCP %d", *x.DSCP))
	}
	if x.Unmarked {
		parts = append(parts, "unmarked")
	}
	if x.Undelivered {
		parts = append(parts, "undelivered (the peer's address never resolves)")
	}
	if pb := x.PolicedBy; pb != nil {
		floor := ""
		if pb.FloorJudged(f) {
			floor = fmt.Sprintf(", floor %.0f%%", (1-pb.Below)*100)
		}
		parts = append(parts, fmt.Sprintf("policed by %s rule %d (%s, burst %d kbit%s)",
			pb.Manifest, pb.Rule, bitrate.Format(float64(pb.RateKbps)*1000), pb.BurstKbit, floor))
	}
	if t := x.Throughput; t != nil {
		parts = append(parts, describeThroughput(*t))
	}
	if x.Why != "" {
		parts = append(parts, "— "+x.Why)
	}
	return strings.Join(parts, " ")
}

// flowResult builds the report entry of one measured run.
func (ex *execution) flowResult(run FlowRun, p *plan, m Measured, vs []verdict.Verdict) results.Flow {
	f := p.flow
	fr := results.Flow{
		Name: f.Name, Family: strings.TrimPrefix(string(run.Spec.Family), "ip"), From: f.From, To: f.To, Protocol: f.Protocol, Port: f.Port,
		Tool: f.Tool, Node: run.Node, OfferedBps: float64(f.Rate), Duration: f.Duration, Expectations: p.texts,
		DSCP: results.Histogram(m.DSCP()), RateWindow: m.Window, Rate: m.Rate, Verdicts: vs,
		WantDSCP: run.Expect.DSCP, WantUnmarked: run.Expect.Unmarked, Notes: m.Notes,
	}
	if rel, err := filepath.Rel(ex.r.Dir, run.Pcap); err == nil {
		fr.Pcap = rel
	}
	if run.Expect.Policed() {
		fr.Policer = &results.Policer{Meter: run.Expect.Meter, RateBps: run.Expect.RateBits(), BurstBits: run.Expect.BurstBits()}
	}
	if m.Flow != nil {
		fr.Packets, fr.Bytes = m.Flow.Packets, m.Flow.Bytes
	}
	for _, t := range p.throughput {
		fr.Verdicts = append(fr.Verdicts, verdict.RateRange(run.Name, fr.Rate, fr.RateWindow, fr.OfferedBps, float64(t.Min), float64(t.Max)))
	}
	return fr
}

func describeThroughput(t scenarios.Throughput) string {
	switch {
	case t.Max == 0:
		return fmt.Sprintf("throughput at least %s", t.Min)
	case t.Min == 0:
		return fmt.Sprintf("throughput at most %s", t.Max)
	}
	return fmt.Sprintf("throughput %s..%s", t.Min, t.Max)
}

func (kindTable) Start() stepKind {
	return stepKind{name: "start", run: func(ex *execution, ctx context.Context, i int, st *scenarios.Step) error {
		return ex.start(ctx, i, st.Start)
	}}
}

func (kindTable) Stop() stepKind {
	return stepKind{name: "stop", run: func(ex *execution, ctx context.Context, _ int, st *scenarios.Step) error {
		return ex.stop(ctx, st.Stop)
	}}
}

// judgeWave judges the measurements of one wave, one capture (pcap) at a
// time, and returns each run's verdicts in the order of the runs: its
// DSCP verdict, its meter's bound, its (or its shared meter's) floor,
// then a failed traffic verdict when its sender failed.
func judgeWave(runs []FlowRun, ms []Measured) [][]verdict.Verdict {
	out := make([][]verdict.Verdict, len(runs))
	byPcap := map[string][]int{}
	for i, run := range runs {
		byPcap[run.Pcap] = append(byPcap[run.Pcap], i)
	}
	for _, pcap := range slices.Sorted(maps.Keys(byPcap)) {
		idx := byPcap[pcap]
		a, expect, floor := captureOf(runs, ms, idx)
		opts := verdict.Testbed(floor)
		opts.Shared = true // the flows of one start step run together
		vs := verdict.Flows(a, expect, opts)
		for _, i := range idx {
			out[i] = verdictsOf(runs[i], ms[i], vs)
		}
	}
	return out
}

// captureOf is the analysis of the capture of the runs idx (an empty one
// when it could not be analysed), the expectations of its flows and the
// runs' lowest floor.
func captureOf(runs []FlowRun, ms []Measured, idx []int) (*capture.Analysis, map[string]flow.Expect, float64) {
	a := &capture.Analysis{}
	for _, i := range idx {
		if ms[i].Capture != nil {
			a = ms[i].Capture
			break
		}
	}
	expect := map[string]flow.Expect{}
	floor := 1.0
	for _, i := range idx {
		if a.Flow(runs[i].Spec.Name) != nil {
			expect[runs[i].Spec.Name] = runs[i].Expect
		}
		floor = min(floor, runs[i].Floor)
	}
	return a, expect, floor
}

// verdictsOf selects the verdicts about the run's flow and its meter.
func verdictsOf(run FlowRun, m Measured, vs []verdict.Verdict) []verdict.Verdict {
	var out []verdict.Verdict
	if run.Expect.Undelivered {
		packets := -1
		if m.Flow != nil {
			packets = int(m.Flow.Packets)
		}
		out = append(out, verdict.NotDelivered(run.Spec.Name, packets, m.Unresolved))
	} else {
		if m.Flow == nil {
			out = append(out, verdict.Unmeasured(run.Spec.Name, verdict.DSCP, 0, "packets", "the flow's capture was not analysed"))
		}
		subjects := []string{run.Spec.Name}
		if run.Expect.Policed() {
			subjects = append(subjects, run.Expect.MeterKey(run.Spec.Name))
		}
		for _, v := range vs {
			if slices.Contains(subjects, v.Subject) {
				out = append(out, v)
			}
		}
	}
	if m.SendErr != nil {
		out = append(out, verdict.Unmeasured(run.Spec.Name, verdict.Traffic, 0, "", m.SendErr.Error()))
	}
	return out
}

// failedProperties lists, sorted and unique, every property the scenario
// failed: the failing step's, nb-audit for invariant sightings, each
// failed flow verdict's property (three-way among them).
func failedProperties(res *results.Scenario, f *verdict.Failure) []verdict.Property {
	var out []verdict.Property
	if f != nil {
		out = append(out, f.Properties...)
	}
	if len(res.Violations) > 0 {
		out = append(out, verdict.Audit)
	}
	for _, fl := range res.Flows {
		for _, v := range fl.Verdicts {
			if !v.Pass {
				out = append(out, v.Property)
			}
		}
	}
	for i, p := range out {
		out[i] = p.Normal()
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// FailureLines are the machine-readable lines of a scenario result, one
// per failed property: "FAIL scenario <name>: <property>". hack/mutation.sh
// (through internal/seeded/testlog) reads them.
func FailureLines(s results.Scenario) []string {
	var out []string
	for _, p := range s.FailedProperties {
		out = append(out, verdict.FailureLine(s.Name, p))
	}
	return out
}
