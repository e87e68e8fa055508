package harness

import (
	"fmt"
	"math"

	"github.com/nqos/nqos/harness/results"
	"github.com/nqos/nqos/scenarios"
)

// offeredSlack is how far above the offered rate a measured rate may be
// (frame overhead on the wire and window edges) before the measurement
// itself is suspect; it is the upper side of a min-only throughput check.
const offeredSlack = 0.10

// steadyRate is the mean rate of the flow's windows without the first and
// last (partial) window.
func steadyRate(rate []float64) (float64, int) {
	if len(rate) > 2 {
		rate = rate[1 : len(rate)-1]
	}
	if len(rate) == 0 {
		return 0, 0
	}
	var sum float64
	for _, r := range rate {
		sum += r
	}
	return sum / float64(len(rate)), len(rate)
}

// throughputVerdict checks min <= steady rate <= max; without max the upper
// side is the offered rate plus offeredSlack (unbounded for TCP).
func throughputVerdict(f results.Flow, t scenarios.Throughput) results.Verdict {
	got, n := steadyRate(f.Rate)
	lo, hi := float64(t.Min), float64(t.Max)
	if hi == 0 {
		hi = math.Inf(1)
		if f.OfferedBps > 0 {
			hi = f.OfferedBps * (1 + offeredSlack)
		}
	}
	pass := n > 0 && got >= lo && got <= hi
	state := "PASS"
	if !pass {
		state = "FAIL"
	}
	return results.Verdict{Check: "throughput", Pass: pass, Message: fmt.Sprintf(
		"%s throughput: steady %s over %d windows of %s, required %s..%s",
		state, scenarios.FormatBitrate(got), n, f.RateWindow, scenarios.FormatBitrate(lo), formatBound(hi))}
}

func formatBound(v float64) string {
	if math.IsInf(v, 1) {
		return "unbounded"
	}
	return scenarios.FormatBitrate(v)
}
