package capture

import (
	"fmt"
	"time"

	"github.com/nqos/nqos/flow"
)

// Verdict is the outcome of one two-sided check.
type Verdict struct {
	Flow      string // flow or meter name
	Property  string // "dscp", "unmarked", "policing-bound", "policing-floor", "meter-accounting"
	Pass      bool
	Measured  float64
	Bound     float64
	Tolerance float64
	Unit      string
	Message   string
}

func (v Verdict) String() string { return v.Message }

func verdict(name, prop string, pass bool, measured, bound, tol float64, unit, detail string) Verdict {
	state := "PASS"
	if !pass {
		state = "FAIL"
	}
	return Verdict{Flow: name, Property: prop, Pass: pass, Measured: measured, Bound: bound, Tolerance: tol, Unit: unit,
		Message: fmt.Sprintf("%s %s %s: %s", state, name, prop, detail)}
}

// DSCPVerdict judges the flow's packets after the readiness point. With
// e.DSCP set and not Unmarked, 100% of the packets must carry it; with
// Unmarked, 0 packets may carry *e.DSCP (any non-zero DSCP when nil). A flow
// with no judged packet fails: absence of evidence is not a pass.
func DSCPVerdict(fr *FlowResult, e flow.Expect) Verdict {
	name := fr.Spec.Name
	if fr.Packets == 0 {
		return verdict(name, "dscp", false, 0, 0, 0, "packets",
			fmt.Sprintf("no packets after the readiness point (%d before)", fr.BeforeReady.Packets))
	}
	if e.Unmarked {
		var bad uint64
		forbidden := "non-zero DSCP"
		for v, n := range fr.DSCP {
			if (e.DSCP == nil && v != 0) || (e.DSCP != nil && v == *e.DSCP) {
				bad += n
			}
		}
		if e.DSCP != nil {
			forbidden = fmt.Sprintf("DSCP %d", *e.DSCP)
		}
		return verdict(name, "unmarked", bad == 0, float64(bad), 0, 0, "packets",
			fmt.Sprintf("%d of %d packets carry %s (allowed 0); histogram %v", bad, fr.Packets, forbidden, fr.DSCPHistogram()))
	}
	if e.DSCP == nil {
		return verdict(name, "dscp", false, 0, 0, 0, "packets", "expectation has neither DSCP nor Unmarked")
	}
	good := fr.DSCP[*e.DSCP&63]
	return verdict(name, "dscp", good == fr.Packets, float64(good), float64(fr.Packets), 0, "packets",
		fmt.Sprintf("%d of %d packets carry DSCP %d (required 100%%); histogram %v", good, fr.Packets, *e.DSCP, fr.DSCPHistogram()))
}

// PolicingTolerance is the slack allowed on the token-bucket bound.
type PolicingTolerance struct {
	Jitter time.Duration // capture timestamp jitter: adds rate*Jitter bits
	Frames int           // whole frames of slack (max frame size each)
}

// Bits returns the tolerance in bits for a bucket.
func (t PolicingTolerance) Bits(b *Bucket) float64 {
	return b.RateBits*t.Jitter.Seconds() + float64(t.Frames)*b.MaxFrameBits
}

// PolicingVerdict checks that over every interval T the meter's frames
// stayed within rate*T + burst (+ tolerance).
func PolicingVerdict(b *Bucket, tol PolicingTolerance) Verdict {
	name := b.Key
	if b.Packets == 0 {
		return verdict(name, "policing-bound", false, 0, b.BurstBits, 0, "bits", "no packets after the readiness point")
	}
	t := tol.Bits(b)
	pass := b.MaxExcessBits <= b.BurstBits+t
	return verdict(name, "policing-bound", pass, b.MaxExcessBits, b.BurstBits, t, "bits",
		fmt.Sprintf("max over intervals of bits - rate*T = %.0f bits (interval %s..%s, %s); bound burst %.0f + tolerance %.0f bits (rate %.0f bit/s)",
			b.MaxExcessBits, b.WorstStart.Format("15:04:05.000000"), b.WorstEnd.Format("15:04:05.000000"),
			b.WorstEnd.Sub(b.WorstStart), b.BurstBits, t, b.RateBits))
}

// ThroughputVerdict checks that an overloaded flow (offered >= 2x its
// meter rate) delivered at least minFraction of the rate over its steady
// state: the whole windows of its first series that start at least settle
// after its first judged frame and end before its last. Two-sided: the
// rate may not exceed rate + burst/window either.
func ThroughputVerdict(fr *FlowResult, e flow.Expect, settle time.Duration, minFraction float64) Verdict {
	name := fr.Spec.Name
	got, d := fr.SteadyBitsPerSecond(settle)
	lo := e.RateBits() * minFraction
	if d <= 0 {
		return verdict(name, "policing-floor", false, 0, lo, 0, "bit/s",
			fmt.Sprintf("no whole window in the steady state (settle %s after %s)", settle, fr.First.Format("15:04:05.000")))
	}
	hi := e.RateBits() + e.BurstBits()/d.Seconds()
	pass := got >= lo && got <= hi
	return verdict(name, "policing-floor", pass, got, lo, hi-lo, "bit/s",
		fmt.Sprintf("steady-state %.2f Mbit/s over %s, required %.2f..%.2f Mbit/s (%.2f x rate .. rate + burst/window)",
			got/1e6, d, lo/1e6, hi/1e6, minFraction))
}

// SteadyBitsPerSecond returns the flow's rate over the whole windows of its
// first series lying in [First+settle, Last], and the covered duration.
func (fr *FlowResult) SteadyBitsPerSecond(settle time.Duration) (float64, time.Duration) {
	if len(fr.Series) == 0 || fr.Packets == 0 {
		return 0, 0
	}
	s := fr.Series[0]
	from := fr.First.Add(settle)
	var bytes uint64
	var d time.Duration
	for _, w := range s.Windows {
		if w.Start.Before(from) || w.Start.Add(s.Size).After(fr.Last) {
			continue
		}
		bytes += w.Bytes
		d += s.Size
	}
	if d == 0 {
		return 0, 0
	}
	return float64(bytes) * 8 / d.Seconds(), d
}

// MeterAccountingVerdict checks packets sent = packets seen at the uplink +
// packets dropped by the meter, within tol packets.
func MeterAccountingVerdict(name string, sent, seen, dropped, tol uint64) Verdict {
	return CountVerdict(name, "meter-accounting", seen+dropped, sent, tol,
		fmt.Sprintf("seen %d + dropped by meter %d = %d, sent %d", seen, dropped, seen+dropped, sent))
}

// CountVerdict checks |got - want| <= tol for two packet counts.
func CountVerdict(name, property string, got, want, tol uint64, detail string) Verdict {
	diff := max(got, want) - min(got, want)
	return verdict(name, property, diff <= tol, float64(got), float64(want), float64(tol), "packets",
		fmt.Sprintf("%s (difference %d, tolerance %d)", detail, diff, tol))
}

// DeliveryVerdict checks that a raw flow's sequence numbers 0..sent-1 all
// arrived (up to tol missing) without duplicates.
func DeliveryVerdict(fr *FlowResult, sent, tol uint64) Verdict {
	missing := fr.Seq.Missing(sent)
	pass := missing <= tol && fr.Seq.Duplicates == 0
	return verdict(fr.Spec.Name, "delivery", pass, float64(missing), 0, float64(tol), "packets",
		fmt.Sprintf("%d of %d sequence numbers missing (tolerance %d), %d duplicates, %d reordered",
			missing, sent, tol, fr.Seq.Duplicates, fr.Seq.Reordered))
}
