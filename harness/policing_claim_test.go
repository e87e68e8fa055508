package harness

import (
	"testing"

	"github.com/nqos/nqos/harness/ovntrace"
)

func TestCapturePolicingClaim(t *testing.T) {
	steady := func(r float64) Measured { return Measured{Rate: []float64{r / 3, r, r, r, r / 5}} }
	for _, tc := range []struct {
		name    string
		m       Measured
		offered uint64
		meter   float64
		want    ovntrace.Policing
	}{
		{"held at the meter", steady(98e6), 300e6, 100e6, ovntrace.Policed},
		{"TCP held at the meter", steady(105e6), 0, 100e6, ovntrace.Policed},
		{"above the meter", steady(140e6), 300e6, 100e6, ovntrace.NotPoliced},
		{"offered below the meter", steady(20e6), 20e6, 100e6, ovntrace.PolicingNotJudged},
		{"no meter rate", steady(20e6), 300e6, 0, ovntrace.PolicingNotJudged},
		{"no windows", Measured{}, 300e6, 100e6, ovntrace.PolicingNotJudged},
	} {
		if got := policing(tc.m, tc.offered, tc.meter); got != tc.want {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
}
