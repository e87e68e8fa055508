package harness

import (
	"testing"
	"time"

	"github.com/nqos/nqos/flow"
	"github.com/nqos/nqos/harness/ovntrace"
)

func TestCapturePolicingClaim(t *testing.T) {
	steady := func(r float64) Measured {
		return Measured{Window: time.Second, Rate: []float64{r / 3, r, r, r, r / 5}}
	}
	perSecond := flow.Expect{MaxRateKbps: 100000, BurstKbits: 1000}
	for _, tc := range []struct {
		name    string
		m       Measured
		offered uint64
		meter   flow.Expect
		want    ovntrace.Policing
	}{
		{"held at the meter", steady(98e6), 300e6, perSecond, ovntrace.Policed},
		{"TCP held at the meter", steady(105e6), 0, perSecond, ovntrace.Policed},
		{"above the meter", steady(140e6), 300e6, perSecond, ovntrace.NotPoliced},
		{"offered below the meter", steady(20e6), 20e6, perSecond, ovntrace.PolicingNotJudged},
		{"no meter rate", steady(20e6), 300e6, flow.Expect{}, ovntrace.PolicingNotJudged},
		{"no windows", Measured{Window: time.Second}, 300e6, perSecond, ovntrace.PolicingNotJudged},
		{"no window size", Measured{Rate: []float64{1, 2, 3}}, 300e6, perSecond, ovntrace.PolicingNotJudged},
		// A full bucket of burst bits on top of the rate: the meter's
		// own allowance, not an unpoliced flow.
		{"burst spread over the steady windows", steady(130e6), 300e6,
			flow.Expect{MaxRateKbps: 100000, BurstKbits: 100000}, ovntrace.Policed},
		{"burst exceeded", steady(150e6), 300e6,
			flow.Expect{MaxRateKbps: 100000, BurstKbits: 100000}, ovntrace.NotPoliced},
		{"offered within rate plus burst", steady(130e6), 140e6,
			flow.Expect{MaxRateKbps: 100000, BurstKbits: 100000}, ovntrace.PolicingNotJudged},
	} {
		if got := policing(tc.m, tc.offered, tc.meter); got != tc.want {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
}

// TestPolicingWithoutBurst is a probe measured on the testbed: a rule of
// 100000 kbps without burst (OVS userspace then sizes the bucket at one
// second of the rate and starts it full), 250 Mbit/s offered for 2 s in
// 100 ms windows. The first 0.9 s pass at the offered rate until the
// bucket's 100 Mbit are spent, then the meter holds 100 Mbit/s.
func TestPolicingWithoutBurst(t *testing.T) {
	mbit := []float64{212, 250, 236, 189, 232, 217, 239, 202, 127, 100, 68, 133, 90, 111, 100, 100, 100, 100, 82, 99, 90, 113, 116, 63}
	m := Measured{Window: 100 * time.Millisecond}
	for _, r := range mbit {
		m.Rate = append(m.Rate, r*1e6)
	}
	e := flow.Expect{MaxRateKbps: 100000}
	if got := policing(m, 250e6, e); got != ovntrace.Policed {
		t.Errorf("meter without burst: %v, want policed", got)
	}
	unpoliced := Measured{Window: m.Window}
	for range mbit {
		unpoliced.Rate = append(unpoliced.Rate, 245e6)
	}
	if got := policing(unpoliced, 250e6, e); got != ovntrace.NotPoliced {
		t.Errorf("flow at the offered rate: %v, want not policed", got)
	}
}
