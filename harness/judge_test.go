package harness

import (
	"strings"
	"testing"

	"github.com/nqos/nqos/flow"
	"github.com/nqos/nqos/harness/verdict"
)

// TestJudgeWaveOneAnalysisPerCapture: the runs of one pcap are judged on
// that capture's analysis (a run whose flow it lacks fails unmeasured),
// the runs of another pcap on theirs.
func TestJudgeWaveOneAnalysisPerCapture(t *testing.T) {
	dscp := 46
	run := func(name, pcap string) FlowRun {
		return FlowRun{Name: name + "/v4", Spec: flow.Spec{Name: name}, Expect: flow.Expect{DSCP: &dscp}, Pcap: pcap, Floor: 0.9}
	}
	runs := []FlowRun{run("a", "n0.pcap"), run("b", "n0.pcap"), run("c", "n1.pcap")}
	ms := make([]Measured, len(runs))
	for i, r := range runs {
		ms[i] = passingMeasure(r)
	}
	simCaptures(runs, ms)
	ms[1].Capture.Flows = ms[1].Capture.Flows[:1] // n0's analysis lacks b
	ms[1].Flow = nil
	got := judgeWave(runs, ms)
	pass := func(vs []verdict.Verdict) bool {
		for _, v := range vs {
			if !v.Pass {
				return false
			}
		}
		return len(vs) > 0
	}
	if !pass(got[0]) || !pass(got[2]) {
		t.Errorf("a %+v, c %+v: want passing verdicts", got[0], got[2])
	}
	if pass(got[1]) || !strings.Contains(got[1][0].Message, "not analysed") {
		t.Errorf("b %+v: want it unmeasured", got[1])
	}
}
