package verdict

import (
	"fmt"
	"time"

	"github.com/nqos/nqos/capture"
	"github.com/nqos/nqos/flow"
)

// DSCPMark judges the flow's packets after the readiness point. With
// e.DSCP set and not Unmarked, 100% of the packets must carry it; with
// Unmarked, 0 packets may carry *e.DSCP (any non-zero DSCP when nil). A
// flow with no judged packet fails: absence of evidence is not a pass.
func DSCPMark(fr *capture.FlowResult, e flow.Expect) Verdict {
	name := fr.Spec.Name
	n := int(fr.Packets)
	if fr.Packets == 0 {
		return Unmeasured(name, DSCP, 0, "packets", fmt.Sprintf("no packets after the readiness point (%d before)", fr.BeforeReady.Packets))
	}
	if e.Unmarked {
		var bad uint64
		forbidden := "non-zero DSCP"
		for v, c := range fr.DSCP {
			if (e.DSCP == nil && v != 0) || (e.DSCP != nil && v == *e.DSCP) {
				bad += c
			}
		}
		if e.DSCP != nil {
			forbidden = fmt.Sprintf("DSCP %d", *e.DSCP)
		}
		return Within(name, Unmarked, float64(bad), 0, Tolerance{}, "packets", n,
			fmt.Sprintf("%d of %d packets carry %s (allowed 0); histogram %v", bad, fr.Packets, forbidden, fr.DSCPHistogram()))
	}
	if e.DSCP == nil {
		return Unmeasured(name, DSCP, 0, "packets", "expectation has neither DSCP nor Unmarked")
	}
	good := fr.DSCP[*e.DSCP&63]
	return Within(name, DSCP, float64(good), float64(fr.Packets), Tolerance{}, "packets", n,
		fmt.Sprintf("%d of %d packets carry DSCP %d (required 100%%); histogram %v", good, fr.Packets, *e.DSCP, fr.DSCPHistogram()))
}

// NotDelivered judges a flow expected undelivered: its sender must never
// have resolved the peer (unresolved says how that showed) and none of
// its packets may reach the capture point. packets is what the capture
// saw (-1: the capture was not analysed, which fails the verdict).
func NotDelivered(name string, packets int, unresolved string) Verdict {
	switch {
	case packets < 0:
		return Unmeasured(name, Undelivered, 0, "packets", "the flow's capture was not analysed")
	case unresolved == "":
		v := Within(name, Undelivered, float64(packets), 0, Tolerance{}, "packets", 1, "")
		v.Pass = false // resolving the peer is the failure, whatever reached the uplink
		v.Message = fmt.Sprintf("FAIL %s %s: the sender resolved its peer and sent (%d packets on the uplink); expected the peer's address never to resolve", name, Undelivered, packets)
		return v
	}
	return Within(name, Undelivered, float64(packets), 0, Tolerance{}, "packets", 1,
		fmt.Sprintf("%d packets on the uplink (allowed 0): %s", packets, unresolved))
}

// PolicingTolerance is the slack allowed on the token-bucket bound.
type PolicingTolerance struct {
	Jitter time.Duration // capture timestamp jitter: adds rate*Jitter bits
	Frames int           // whole frames of slack (max frame size each)
}

// Bound checks that over every interval T the meter's frames stayed
// within rate*T + burst (+ tolerance): 0 <= max excess <= burst + tol.
func Bound(b *capture.Bucket, tol PolicingTolerance) Verdict {
	name := b.Key
	if b.Packets == 0 {
		return Unmeasured(name, PolicingBound, b.BurstBits, "bits", "no packets after the readiness point")
	}
	t := b.RateBits*tol.Jitter.Seconds() + float64(tol.Frames)*b.MaxFrameBits
	return Within(name, PolicingBound, b.MaxExcessBits, b.BurstBits, Tolerance{Below: b.BurstBits, Above: t}, "bits", int(b.Packets),
		fmt.Sprintf("max over intervals of bits - rate*T = %.0f bits (interval %s..%s, %s); bound burst %.0f + tolerance %.0f bits (rate %.0f bit/s)",
			b.MaxExcessBits, b.WorstStart.Format("15:04:05.000000"), b.WorstEnd.Format("15:04:05.000000"),
			b.WorstEnd.Sub(b.WorstStart), b.BurstBits, t, b.RateBits))
}

// Floor checks that an overloaded flow (offered >= 2x its meter rate)
// delivered rate*minFraction .. rate + burst/window over its steady
// state: the whole windows of its first series that start at least settle
// after its first judged frame and end before its last.
func Floor(fr *capture.FlowResult, e flow.Expect, settle time.Duration, minFraction float64) Verdict {
	name := fr.Spec.Name
	var got float64
	var d time.Duration
	var n int
	if len(fr.Series) > 0 && fr.Packets > 0 {
		got, d, n = windowRate(fr.Series[:1], fr.First.Add(settle), fr.Last, false)
	}
	rate := e.RateBits()
	if d <= 0 {
		return Unmeasured(name, PolicingFloor, rate, "bit/s",
			fmt.Sprintf("no whole window in the steady state (settle %s after %s)", settle, fr.First.Format("15:04:05.000")))
	}
	tol := Tolerance{Below: rate * (1 - minFraction), Above: e.BurstBits() / d.Seconds()}
	return Within(name, PolicingFloor, got, rate, tol, "bit/s", n,
		fmt.Sprintf("steady-state %.2f Mbit/s over %s, required %.2f..%.2f Mbit/s (%.2f x rate .. rate + burst/window)",
			got/1e6, d, (rate-tol.Below)/1e6, (rate+tol.Above)/1e6, minFraction))
}

// Accounting checks packets sent = packets seen at the uplink +
// packets dropped by the meter, within tol packets.
func Accounting(name string, sent, seen, dropped, tol uint64) Verdict {
	return Count(name, MeterAccounting, seen+dropped, sent, tol,
		fmt.Sprintf("seen %d + dropped by meter %d = %d, sent %d", seen, dropped, seen+dropped, sent))
}

// Count checks |got - want| <= tol for two packet counts.
func Count(name string, p Property, got, want, tol uint64, detail string) Verdict {
	diff := max(got, want) - min(got, want)
	return Within(name, p, float64(got), float64(want), Tolerance{Below: float64(tol), Above: float64(tol)}, "packets", int(max(got, want, 1)),
		fmt.Sprintf("%s (difference %d, tolerance %d)", detail, diff, tol))
}

// Delivered checks that a raw flow's sequence numbers 0..sent-1 all
// arrived (up to tol missing) without duplicates.
func Delivered(fr *capture.FlowResult, sent, tol uint64) Verdict {
	missing := fr.Seq.Missing(sent)
	detail := fmt.Sprintf("%d of %d sequence numbers missing (tolerance %d), %d duplicates, %d reordered",
		missing, sent, tol, fr.Seq.Duplicates, fr.Seq.Reordered)
	if fr.Seq.Duplicates > 0 {
		return Unmeasured(fr.Spec.Name, Delivery, 0, "packets", detail)
	}
	return Within(fr.Spec.Name, Delivery, float64(missing), 0, upTo(float64(tol)), "packets", int(sent), detail)
}
