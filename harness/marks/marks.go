// Package marks is the one marked-packet counter of the lifecycle probes:
// it counts the packets a capture/live Watch on the uplinks saw from a guest to a
// peer in a time window by whether they carry the expected DSCP, and
// measures the longest time without a marked packet. Package
// harness/verdict judges the counts.
package marks

import (
	"net/netip"
	"slices"
	"time"

	"github.com/nqos/nqos/capture"
)

// Count is what the watched uplinks saw of one source towards one
// destination in a time window.
type Count struct {
	From time.Time `json:"from,omitzero"`
	To   time.Time `json:"to,omitzero"`
	// Packets seen; Marked carried the expected DSCP, Unmarked any other.
	Packets  int `json:"packets"`
	Marked   int `json:"marked"`
	Unmarked int `json:"unmarked"`
	// DSCP counts packets per DSCP value.
	DSCP          map[int]int `json:"dscp"`
	FirstMarked   time.Time   `json:"firstMarked,omitzero"`
	FirstUnmarked time.Time   `json:"firstUnmarked,omitzero"`
	LastUnmarked  time.Time   `json:"lastUnmarked,omitzero"`
	// Gap is the longest time without a marked packet: between two
	// consecutive marked packets, or from the window's start to the first
	// (and, for a closed window, from the last to its end). It covers
	// lost and unmarked packets.
	Gap      time.Duration `json:"gapNs"`
	GapStart time.Time     `json:"gapStart,omitzero"`
	GapEnd   time.Time     `json:"gapEnd,omitzero"`
}

// Tally counts the packets of seen to dst within [from, to) by whether
// they carry dscp; a zero bound is open. Packets to other destinations
// are ignored; seen need not be in time order.
func Tally(seen []capture.Packet, dst netip.Addr, dscp int, from, to time.Time) Count {
	c := Count{From: from, To: to, DSCP: map[int]int{}}
	last := from
	for _, s := range inOrder(seen) {
		if s.Dst != dst || (!from.IsZero() && s.At.Before(from)) || (!to.IsZero() && !s.At.Before(to)) {
			continue
		}
		c.Packets++
		c.DSCP[s.DSCP]++
		if s.DSCP != dscp {
			c.Unmarked++
			if c.FirstUnmarked.IsZero() {
				c.FirstUnmarked = s.At
			}
			c.LastUnmarked = s.At
			continue
		}
		c.Marked++
		if c.FirstMarked.IsZero() {
			c.FirstMarked = s.At
		}
		if !last.IsZero() {
			c.noteGap(last, s.At)
		}
		last = s.At
	}
	if !to.IsZero() && !last.IsZero() {
		c.noteGap(last, to)
	}
	return c
}

func (c *Count) noteGap(a, b time.Time) {
	if d := b.Sub(a); d > c.Gap {
		c.Gap, c.GapStart, c.GapEnd = d, a, b
	}
}

// inOrder returns seen sorted by time (seen itself when it already is:
// one watch's log is in arrival order, a merge of several may not be).
func inOrder(seen []capture.Packet) []capture.Packet {
	before := func(a, b capture.Packet) int { return a.At.Compare(b.At) }
	if slices.IsSortedFunc(seen, before) {
		return seen
	}
	sorted := slices.Clone(seen)
	slices.SortStableFunc(sorted, before)
	return sorted
}

// First returns the first packet of seen to dst at or after t carrying
// dscp, or with any DSCP when dscp < 0.
func First(seen []capture.Packet, dst netip.Addr, dscp int, t time.Time) (capture.Packet, bool) {
	var best capture.Packet
	found := false
	for _, s := range seen {
		if s.Dst != dst || s.At.Before(t) || (dscp >= 0 && s.DSCP != dscp) {
			continue
		}
		if !found || s.At.Before(best.At) {
			best, found = s, true
		}
	}
	return best, found
}
