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
