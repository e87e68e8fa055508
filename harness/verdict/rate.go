package verdict

import (
	"fmt"
	"math"
	"time"

	"github.com/nqos/nqos/internal/bitrate"
)

// OfferedSlack is how far above the offered rate a measured rate may be
// (frame overhead on the wire and window edges) before the measurement
// itself is suspect; it is the upper side of a min-only throughput check.
const OfferedSlack = 0.10

// SteadyRate is the mean rate of the flow's windows without the first and
// last (partial) window, and how many windows it is made of.
func SteadyRate(rate []float64) (float64, int) {
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

// RateRange checks min <= steady rate <= max of a flow's rate series
// (bit/s per window); without max the upper side is the offered rate plus
// 10% (unbounded when nothing was offered, e.g. TCP at line rate).
func RateRange(subject string, rate []float64, window time.Duration, offered, lo, hi float64) Verdict {
	got, n := SteadyRate(rate)
	if hi == 0 {
		hi = math.Inf(1)
		if offered > 0 {
			hi = offered * (1 + OfferedSlack)
		}
	}
	v := Within(subject, Throughput, got, lo, Tolerance{Below: 0, Above: hi - lo}, "bit/s", n, "")
	v.Message = fmt.Sprintf("%s throughput: steady %s over %d windows of %s, required %s..%s",
		state(v.Pass), bitrate.Format(got), n, window, bitrate.Format(lo), formatBound(hi))
	return v
}

func formatBound(v float64) string {
	if math.IsInf(v, 1) {
		return "unbounded"
	}
	return bitrate.Format(v)
}
