package localnetenv

import (
	"strings"
	"testing"
	"time"

	"github.com/nqos/nqos/capture"
	"github.com/nqos/nqos/flow"
)

// steadyFlow is a flow result delivering bps for 3 s in 100 ms windows.
func steadyFlow(name string, bps float64, t0 time.Time) *capture.FlowResult {
	fr := &capture.FlowResult{Spec: flow.Spec{Name: name}, First: t0, Last: t0.Add(3 * time.Second)}
	fr.Packets = 1000
	s := &capture.Series{Size: window, Origin: t0}
	for i := range 30 {
		s.Windows = append(s.Windows, capture.Window{Start: t0.Add(time.Duration(i) * window), Packets: 10, Bytes: uint64(bps * window.Seconds() / 8)})
	}
	fr.Series = []*capture.Series{s}
	return fr
}

func TestSharedFloorsJudgeTheAggregate(t *testing.T) {
	t0 := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	e := flow.Expect{MaxRateKbps: 100000, BurstKbits: 5000, Meter: "m"}
	expect := map[string]flow.Expect{"a": e, "b": e}
	for _, tc := range []struct {
		a, b float64
		pass bool
	}{
		{31e6, 66e6, true},  // uneven split, 97 Mbit/s together
		{20e6, 30e6, false}, // meter not filled: below the floor
		{80e6, 80e6, false}, // more than one meter can pass: not shared
	} {
		a := &capture.Analysis{
			Flows:   []*capture.FlowResult{steadyFlow("a", tc.a, t0), steadyFlow("b", tc.b, t0)},
			Buckets: []*capture.Bucket{{Key: "m", Flows: []string{"a", "b"}, RateBits: 1e8, BurstBits: 5e6}},
		}
		perFlow := []capture.Verdict{{Flow: "a", Property: "policing-floor"}, {Flow: "b", Property: "policing-floor"}, {Flow: "a", Property: "dscp", Pass: true}}
		vs := sharedFloors(a, perFlow, expect, 0.85)
		if len(vs) != 2 || vs[0].Property != "dscp" || vs[1].Property != "policing-floor-aggregate" {
			t.Fatalf("%v: verdicts %+v, want the dscp verdict and one aggregate floor", tc, vs)
		}
		if vs[1].Pass != tc.pass || !strings.Contains(vs[1].Message, "[a b]") {
			t.Errorf("%v: %s, want pass=%v", tc, vs[1].Message, tc.pass)
		}
	}
}
