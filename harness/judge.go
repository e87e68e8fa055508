package harness

import (
	"maps"
	"slices"

	"github.com/nqos/nqos/capture"
	"github.com/nqos/nqos/flow"
	"github.com/nqos/nqos/harness/verdict"
)

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
		a, expect, floor := analysisOf(runs, ms, idx)
		opts := verdict.Testbed(floor)
		opts.Shared = true // the flows of one start step run together
		vs := verdict.Flows(a, expect, opts)
		for _, i := range idx {
			out[i] = verdictsOf(runs[i], ms[i], vs)
		}
	}
	return out
}

// analysisOf puts the flows and meters of the runs idx back together as
// one capture's analysis, with their expectations and the lowest floor.
func analysisOf(runs []FlowRun, ms []Measured, idx []int) (*capture.Analysis, map[string]flow.Expect, float64) {
	a := &capture.Analysis{}
	expect := map[string]flow.Expect{}
	meters := map[string]*capture.Bucket{}
	floor := 1.0
	for _, i := range idx {
		if ms[i].Flow != nil {
			a.Flows = append(a.Flows, ms[i].Flow)
			expect[runs[i].Spec.Name] = runs[i].Expect
		}
		if b := ms[i].Meter; b != nil {
			meters[b.Key] = b
		}
		floor = min(floor, runs[i].Floor)
	}
	for _, k := range slices.Sorted(maps.Keys(meters)) {
		a.Buckets = append(a.Buckets, meters[k])
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
		if m.SendErr != nil {
			out = append(out, verdict.Unmeasured(run.Spec.Name, verdict.Traffic, 0, "", m.SendErr.Error()))
		}
		return out
	}
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
	if m.SendErr != nil {
		out = append(out, verdict.Unmeasured(run.Spec.Name, verdict.Traffic, 0, "", m.SendErr.Error()))
	}
	return out
}
