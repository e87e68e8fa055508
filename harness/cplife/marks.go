package cplife

import (
	"net/netip"
	"time"

	"github.com/nqos/nqos/topo/localnet"
)

// MarkStats is what the uplink saw of one stream (one source, one
// destination) in a time window.
type MarkStats struct {
	From time.Time `json:"from"`
	To   time.Time `json:"to"`
	// Packets seen; Marked carried the expected DSCP, Unmarked any other.
	Packets  int `json:"packets"`
	Marked   int `json:"marked"`
	Unmarked int `json:"unmarked"`
	// FirstUnmarked and LastUnmarked bound the unmarked packets.
	FirstUnmarked time.Time `json:"firstUnmarked,omitzero"`
	LastUnmarked  time.Time `json:"lastUnmarked,omitzero"`
	// Gap is the longest time without a marked packet: between two
	// consecutive marked packets, or from the window's start to the first
	// / the last to the window's end. It covers lost and unmarked packets.
	Gap      time.Duration `json:"gapNs"`
	GapStart time.Time     `json:"gapStart"`
	GapEnd   time.Time     `json:"gapEnd"`
}

// AnalyzeMarks classifies the packets of seen that go to dst within
// [from, to) by whether they carry dscp. seen must be in arrival order
// (as a DSCPWatch returns it); packets to other destinations are ignored.
func AnalyzeMarks(seen []localnet.Seen, dst netip.Addr, dscp int, from, to time.Time) MarkStats {
	st := MarkStats{From: from, To: to}
	last := from
	for _, s := range seen {
		if s.Dst != dst || s.At.Before(from) || !s.At.Before(to) {
			continue
		}
		st.Packets++
		if s.DSCP != dscp {
			st.Unmarked++
			if st.FirstUnmarked.IsZero() {
				st.FirstUnmarked = s.At
			}
			st.LastUnmarked = s.At
			continue
		}
		st.Marked++
		st.noteGap(last, s.At)
		last = s.At
	}
	st.noteGap(last, to)
	return st
}

func (st *MarkStats) noteGap(a, b time.Time) {
	if d := b.Sub(a); d > st.Gap {
		st.Gap, st.GapStart, st.GapEnd = d, a, b
	}
}

// firstMarked is the time of the first packet of seen to dst carrying
// dscp at or after t.
func firstMarked(seen []localnet.Seen, dst netip.Addr, dscp int, t time.Time) (time.Time, bool) {
	for _, s := range seen {
		if s.Dst == dst && s.DSCP == dscp && !s.At.Before(t) {
			return s.At, true
		}
	}
	return time.Time{}, false
}

// DeliveredBitsPerSecond is the rate of the packets of seen to dst with
// the DSCP within [from, to), each counted as frameBits (the untagged
// Ethernet frame a meter counts).
func DeliveredBitsPerSecond(seen []localnet.Seen, dst netip.Addr, dscp int, frameBits float64, from, to time.Time) float64 {
	if !to.After(from) {
		return 0
	}
	n := 0
	for _, s := range seen {
		if s.Dst == dst && s.DSCP == dscp && !s.At.Before(from) && s.At.Before(to) {
			n++
		}
	}
	return float64(n) * frameBits / to.Sub(from).Seconds()
}
