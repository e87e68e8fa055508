package verdict

import (
	"encoding/json"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/nqos/nqos/capture"
	"github.com/nqos/nqos/flow"
)

const window = 100 * time.Millisecond

// steadyFlow is a UDP flow offered at 300 Mbit/s delivering bps for 3 s
// in 100 ms windows.
func steadyFlow(name string, bps float64, t0 time.Time) *capture.FlowResult {
	fr := &capture.FlowResult{Spec: flow.Spec{Name: name, Protocol: flow.UDP, Rate: 300e6}, First: t0, Last: t0.Add(3 * time.Second)}
	fr.Packets = 1000
	s := &capture.Series{Size: window, Origin: t0}
	for i := range 30 {
		s.Windows = append(s.Windows, capture.Window{Start: t0.Add(time.Duration(i) * window), Packets: 10, Bytes: uint64(bps * window.Seconds() / 8)})
	}
	fr.Series = []*capture.Series{s}
	return fr
}

func TestSharedMeterGetsOneAggregateFloor(t *testing.T) {
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
			Buckets: []*capture.Bucket{{Key: "m", Flows: []string{"a", "b"}, RateBits: 1e8, BurstBits: 5e6, Packets: 2000, MaxExcessBits: 1e6}},
		}
		if vs := Flows(a, expect, Options{MinFraction: 0.85}); len(vs) != 3 || vs[1].Property != PolicingFloor || vs[2].Property != PolicingFloor {
			t.Fatalf("%v: without Shared %+v, want the bound and one floor per flow", tc, vs)
		}
		vs := Flows(a, expect, Options{MinFraction: 0.85, Shared: true})
		if len(vs) != 2 || vs[0].Property != PolicingBound || vs[1].Property != PolicingFloorAggregate {
			t.Fatalf("%v: verdicts %+v, want the bound and one aggregate floor (no per-flow floor)", tc, vs)
		}
		v := vs[1]
		if v.Pass != tc.pass || !strings.Contains(v.Message, "[a b]") || v.Want != 1e8 || v.Samples == 0 {
			t.Errorf("%v: %+v, want pass=%v", tc, v, tc.pass)
		}
	}
}

func TestWithinIsTwoSided(t *testing.T) {
	tol := Tolerance{Below: 10, Above: 5}
	for _, tc := range []struct {
		got     float64
		samples int
		pass    bool
	}{{100, 1, true}, {90, 1, true}, {89.9, 1, false}, {105, 1, true}, {105.1, 1, false}, {100, 0, false}} {
		v := Within("f", Throughput, tc.got, 100, tol, "bit/s", tc.samples, "d")
		if v.Pass != tc.pass || !strings.HasPrefix(v.Message, map[bool]string{true: "PASS f throughput: ", false: "FAIL f throughput: "}[tc.pass]) {
			t.Errorf("got %v samples %d: %+v, want pass=%v", tc.got, tc.samples, v, tc.pass)
		}
	}
}

func TestDSCPMark(t *testing.T) {
	fr := &capture.FlowResult{Spec: flow.Spec{Name: "f"}}
	if v := DSCPMark(fr, flow.Expect{DSCP: flow.DSCPValue(10)}); v.Pass || v.Samples != 0 {
		t.Errorf("no packets: %+v, want a failure", v)
	}
	fr.Packets, fr.DSCP[10], fr.DSCP[0] = 100, 99, 1
	if v := DSCPMark(fr, flow.Expect{DSCP: flow.DSCPValue(10)}); v.Pass || v.Got != 99 || v.Want != 100 || v.Samples != 100 {
		t.Errorf("one unmarked: %+v, want a failure 99 of 100", v)
	}
	if v := DSCPMark(fr, flow.Expect{DSCP: flow.DSCPValue(46), Unmarked: true}); !v.Pass || v.Property != Unmarked {
		t.Errorf("none with 46: %+v, want pass", v)
	}
	if v := DSCPMark(fr, flow.Expect{Unmarked: true}); v.Pass {
		t.Errorf("99 marked, want unmarked: %+v, want a failure", v)
	}
}

func TestRateRangeUnboundedEncodesNull(t *testing.T) {
	v := RateRange("f", []float64{1, 5e6, 5e6, 1}, window, 0, 1e6, 0)
	if !v.Pass || !math.IsInf(v.High(), 1) {
		t.Fatalf("%+v, want pass with no upper bound", v)
	}
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `"tolerance":{"below":0,"above":null}`) {
		t.Errorf("JSON %s lacks the unbounded tolerance", b)
	}
	var back Verdict
	if err := json.Unmarshal(b, &back); err != nil || !math.IsInf(back.Tolerance.Above, 1) {
		t.Errorf("round trip %+v, %v", back, err)
	}
	if v := RateRange("f", []float64{1, 200e6, 200e6, 1}, window, 100e6, 50e6, 0); v.Pass {
		t.Errorf("above offered + 10%%: %+v, want a failure", v)
	}
}

func TestProbeVerdicts(t *testing.T) {
	if v := ProbeMarks("a", "peer", 0, 0, 0, 10); v.Pass {
		t.Errorf("no packet seen: %+v, want a failure", v)
	}
	if v := ProbeMarks("a", "peer", 500, 2, 1, 10); v.Pass || v.Property != Unmarked {
		t.Errorf("2 unmarked, 1 allowed: %+v", v)
	}
	if v := ProbeLoss("a", "out", 3, 500, 3); !v.Pass {
		t.Errorf("3 lost, 3 allowed: %+v", v)
	}
	if v := MarkingGap("a", 751*time.Millisecond, 750*time.Millisecond, 500); v.Pass || v.Property != Gap {
		t.Errorf("gap over: %+v", v)
	}
	if v := FirstMarked("a", 0, time.Millisecond, time.Second, 10, ""); v.Pass {
		t.Errorf("never marked: %+v", v)
	}
}

func TestFailureLineNormalises(t *testing.T) {
	if got := FailureLine("s", Property("a b")); got != "FAIL scenario s: a-b" {
		t.Errorf("got %q", got)
	}
}

func TestRateRangeTwoSided(t *testing.T) {
	rate := []float64{50e6, 200e6, 210e6, 190e6, 10e6}
	for _, tc := range []struct {
		lo, hi float64
		pass   bool
	}{{150e6, 0, true}, {201e6, 0, false}, {100e6, 199e6, false}, {100e6, 201e6, true}} {
		if v := RateRange("f", rate, time.Second, 250e6, tc.lo, tc.hi); v.Pass != tc.pass || v.Samples != 3 {
			t.Errorf("%v..%v: %+v, want pass=%v over 3 windows", tc.lo, tc.hi, v, tc.pass)
		}
	}
}

func TestNotDelivered(t *testing.T) {
	for _, tc := range []struct {
		name       string
		packets    int
		unresolved string
		pass       bool
	}{
		{"never resolved, nothing sent", 0, "neighbour fd00::2 on eth0: timed out", true},
		{"never resolved, yet packets on the uplink", 3, "neighbour fd00::2 on eth0: timed out", false},
		{"resolved and delivered", 1200, "", false},
		{"resolved, nothing captured", 0, "", false},
		{"capture not analysed", -1, "timed out", false},
	} {
		v := NotDelivered("f/v6", tc.packets, tc.unresolved)
		if v.Pass != tc.pass || v.Property != Undelivered {
			t.Errorf("%s: pass %v property %s (%s), want pass %v", tc.name, v.Pass, v.Property, v.Message, tc.pass)
		}
	}
}
