package ovntrace

import (
	"fmt"
	"strings"
)

// ObserveHistogram reduces a capture's per-DSCP packet counts (such as
// capture.Counts.DSCP, judged after the readiness point) to the single
// DSCP Agree compares. Packets of several DSCPs are an error naming them:
// a flow is marked one way or it is not agreeing with anything.
func ObserveHistogram(hist [64]uint64, sent uint8, p Policing) (Observation, error) {
	obs := Observation{SentDSCP: sent, Policing: p}
	var seen []string
	for v, n := range hist {
		if n == 0 {
			continue
		}
		seen = append(seen, fmt.Sprintf("DSCP %d ×%d", v, n))
		obs.DSCP = uint8(v)
		obs.Packets += int(n)
	}
	if len(seen) > 1 {
		return Observation{}, fmt.Errorf("capture saw %d DSCP values (%s), want one", len(seen), strings.Join(seen, ", "))
	}
	return obs, nil
}
