package verdict

import (
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/nqos/nqos/capture"
	"github.com/nqos/nqos/flow"
)

// Options tune Flows; zero values take the defaults.
type Options struct {
	Tolerance   PolicingTolerance // default: 2 ms jitter
	Settle      time.Duration     // steady state starts this long after a flow's first judged frame; default 300 ms
	MinFraction float64           // overloaded UDP floor as a fraction of the rate; default 0.9
	// Shared judges a meter shared by flows that run together with one
	// floor on their aggregate rate instead of one per flow (flows sent one
	// after the other, as a spoof step's, keep one floor each).
	Shared bool
}

func (o Options) withDefaults() Options {
	if o.Tolerance == (PolicingTolerance{}) {
		o.Tolerance.Jitter = 2 * time.Millisecond
	}
	if o.Settle == 0 {
		o.Settle = 300 * time.Millisecond
	}
	if o.MinFraction == 0 {
		o.MinFraction = 0.9
	}
	return o
}

// Testbed are the options of the embedded testbed's captures: 5 ms of
// capture timestamp jitter plus two whole frames. The userspace datapath
// and the capture share the 2 cores with the senders, so AF_PACKET
// timestamps of back-to-back frames are compressed when the capture
// thread runs late: measured at load 12-15, 5 291 931 and 5 395 343 bits
// over 100 Mbit/s meters with 5 000 000-bit bursts (3-4 ms of rate), and
// 5 205 769 on a TCP flow at lower load. A meter passing 10% over a
// 100 Mbit/s rate still exceeds burst plus tolerance after 0.6 s of
// overload. Steady state 300 ms after a flow's first frame.
func Testbed(minFraction float64) Options {
	return Options{Tolerance: PolicingTolerance{Jitter: testbedJitter, Frames: 2}, Settle: 300 * time.Millisecond, MinFraction: minFraction}
}

// testbedJitter is the capture timestamp jitter Testbed allows.
const testbedJitter = 5 * time.Millisecond

// Flows applies the standard verdicts of one capture's analysis, in a
// stable order: DSCP (or unmarked) per flow with such an expectation, the
// token-bucket bound per meter, and the policing floor per overloaded UDP
// flow (offered Rate >= 2x its meter rate). With opts.Shared a meter
// shared by several flows (one QoS row is one meter per node, and flows
// running together split its rate unevenly) gets one floor on their
// aggregate rate instead of one per flow.
func Flows(a *capture.Analysis, expect map[string]flow.Expect, opts Options) []Verdict {
	opts = opts.withDefaults()
	var vs []Verdict
	for _, fr := range a.Flows {
		if e, ok := expect[fr.Spec.Name]; ok && (e.DSCP != nil || e.Unmarked) {
			vs = append(vs, DSCPMark(fr, e))
		}
	}
	shared := map[string]*capture.Bucket{}
	for _, b := range a.Buckets {
		vs = append(vs, Bound(b, opts.Tolerance))
		if opts.Shared && len(b.Flows) > 1 {
			shared[b.Key] = b
		}
	}
	for _, fr := range a.Flows {
		e, ok := expect[fr.Spec.Name]
		if ok && e.Policed() && fr.Spec.Protocol == flow.UDP && float64(fr.Spec.Rate) >= 2*e.RateBits() && shared[e.MeterKey(fr.Spec.Name)] == nil {
			vs = append(vs, Floor(fr, e, opts.Settle, opts.MinFraction))
		}
	}
	for _, key := range slices.Sorted(maps.Keys(shared)) {
		vs = append(vs, SharedFloor(a, shared[key], opts.Settle, opts.MinFraction))
	}
	return vs
}

// SharedFloor judges a shared meter's aggregate steady rate over the
// common steady interval of its flows (window by window; all series of
// one analysis share the capture's origin), counting untagged frame bytes
// as the meter does: rate*floor <= sum <= rate + burst/T.
func SharedFloor(a *capture.Analysis, b *capture.Bucket, settle time.Duration, floor float64) Verdict {
	var from, to time.Time
	var series []*capture.Series
	var vlan bool
	for i, name := range b.Flows {
		fr := a.Flow(name)
		if fr == nil || len(fr.Series) == 0 || fr.Packets == 0 {
			continue
		}
		series = append(series, fr.Series[0])
		vlan = vlan || fr.Spec.VLAN != 0
		if first := fr.First.Add(settle); i == 0 || first.After(from) {
			from = first
		}
		if i == 0 || fr.Last.Before(to) {
			to = fr.Last
		}
	}
	var sum float64
	var d time.Duration
	var n int
	if len(series) == len(b.Flows) {
		sum, d, n = windowRate(series, from, to, vlan)
	}
	if n == 0 {
		return Unmeasured(b.Key, PolicingFloorAggregate, b.RateBits, "bit/s", fmt.Sprintf("flows %v have no common steady-state window", b.Flows))
	}
	tol := Tolerance{Below: b.RateBits * (1 - floor), Above: b.BurstBits / d.Seconds()}
	return Within(b.Key, PolicingFloorAggregate, sum, b.RateBits, tol, "bit/s", n,
		fmt.Sprintf("flows %v together %.2f Mbit/s (untagged frames, common steady %s), required %.2f..%.2f Mbit/s: one meter shared per rule per node",
			b.Flows, sum/1e6, d, (b.RateBits-tol.Below)/1e6, (b.RateBits+tol.Above)/1e6))
}

// windowRate is the rate of the bits of all series over their windows
// lying wholly in [from, to], the duration those windows cover and how
// many there are (0, 0, 0 for none); untagged removes the 802.1Q tag the
// meter does not count.
func windowRate(series []*capture.Series, from, to time.Time, untagged bool) (float64, time.Duration, int) {
	var bits float64
	var n int
	size := series[0].Size
	for i, w := range series[0].Windows {
		if w.Start.Before(from) || w.Start.Add(size).After(to) {
			continue
		}
		n++
		for _, s := range series {
			if i < len(s.Windows) {
				bytes := float64(s.Windows[i].Bytes)
				if untagged {
					bytes -= 4 * float64(s.Windows[i].Packets)
				}
				bits += 8 * bytes
			}
		}
	}
	if n == 0 {
		return 0, 0, 0
	}
	d := time.Duration(n) * size
	return bits / d.Seconds(), d, n
}
