package verdict

import (
	"fmt"

	"github.com/nqos/nqos/internal/bitrate"
)

// Properties of flows measured where they are delivered (past the
// fabric).
const (
	FabricLoss    Property = "fabric-loss"    // loss between the uplink and the destination outside its range
	DeliveredRate Property = "delivered-rate" // the rate the destination received outside its range
	DeliveredDSCP Property = "delivered-dscp" // delivered packets with another DSCP than expected
	ClassDrops    Property = "class-drops"    // a shaped class dropped a share of its packets outside its range
)

// ClassDropRange checks lo <= dropped/(sent+dropped) <= hi for one
// shaped class over a measurement.
func ClassDropRange(subject string, sent, dropped uint64, lo, hi float64) Verdict {
	total := sent + dropped
	got := 0.0
	if total > 0 {
		got = float64(dropped) / float64(total)
	}
	return Within(subject, ClassDrops, got, lo, Tolerance{Below: 0, Above: hi - lo}, "fraction", int(total),
		fmt.Sprintf("dropped %d of %d packets (%.1f%%), required %.1f%%..%.1f%%", dropped, total, 100*got, 100*lo, 100*hi))
}

// LossFraction is the fraction of the packets seen on the uplink that
// did not reach the destination (0 when none was seen).
func LossFraction(uplink, delivered uint64) float64 {
	if uplink == 0 || delivered >= uplink {
		return 0
	}
	return float64(uplink-delivered) / float64(uplink)
}

// FabricLossRange checks lo <= loss fraction <= hi between the uplink's and the
// destination's packet counts of a flow.
func FabricLossRange(subject string, uplink, delivered uint64, lo, hi float64) Verdict {
	got := LossFraction(uplink, delivered)
	return Within(subject, FabricLoss, got, lo, Tolerance{Below: 0, Above: hi - lo}, "fraction", int(uplink),
		fmt.Sprintf("%d of %d packets seen on the uplink arrived, loss %.1f%%, required %.1f%%..%.1f%%",
			delivered, uplink, 100*got, 100*lo, 100*hi))
}

// DeliveredRange checks lo <= steady delivered rate <= hi of a flow's delivered
// rate series.
func DeliveredRange(subject string, rate []float64, lo, hi float64) Verdict {
	got, n := SteadyRate(rate)
	return Within(subject, DeliveredRate, got, lo, Tolerance{Below: 0, Above: hi - lo}, "bit/s", n,
		fmt.Sprintf("steady %s over %d windows, required %s..%s",
			bitrate.Format(got), n, bitrate.Format(lo), bitrate.Format(hi)))
}

// DeliveredMark checks that every delivered packet of a flow carries DSCP want
// (tolerance 0 packets).
func DeliveredMark(subject string, hist map[int]uint64, want int) Verdict {
	var total, other uint64
	for d, n := range hist {
		total += n
		if d != want {
			other += n
		}
	}
	return Within(subject, DeliveredDSCP, float64(other), 0, Tolerance{}, "packets", int(total),
		fmt.Sprintf("%d of %d delivered packets without DSCP %d (histogram %v)", other, total, want, hist))
}
