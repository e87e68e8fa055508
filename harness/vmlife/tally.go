package vmlife

import (
	"net/netip"
	"slices"
	"time"

	"github.com/nqos/nqos/topo/localnet"
)

// Marking is what the watched uplinks saw of one source towards one
// destination in a time window.
type Marking struct {
	Packets  int `json:"packets"`
	Marked   int `json:"marked"`   // carrying the expected DSCP
	Unmarked int `json:"unmarked"` // carrying any other DSCP
	// DSCP counts packets per DSCP value.
	DSCP         map[int]int `json:"dscp"`
	FirstMarked  time.Time   `json:"firstMarked,omitzero"`
	LastUnmarked time.Time   `json:"lastUnmarked,omitzero"`
}

// tally counts the packets to dst seen in [from, to] (zero bounds are
// open) by whether they carry dscp.
func tally(seen []localnet.Seen, dst netip.Addr, dscp int, from, to time.Time) Marking {
	m := Marking{DSCP: map[int]int{}}
	for _, s := range seen {
		if s.Dst != dst || (!from.IsZero() && s.At.Before(from)) || (!to.IsZero() && s.At.After(to)) {
			continue
		}
		m.Packets++
		m.DSCP[s.DSCP]++
		if s.DSCP == dscp {
			m.Marked++
			if m.FirstMarked.IsZero() || s.At.Before(m.FirstMarked) {
				m.FirstMarked = s.At
			}
			continue
		}
		m.Unmarked++
		if s.At.After(m.LastUnmarked) {
			m.LastUnmarked = s.At
		}
	}
	return m
}

// firstAfter returns the first packet to dst at or after t, with the DSCP
// when dscp >= 0 or with any DSCP when dscp < 0.
func firstAfter(seen []localnet.Seen, dst netip.Addr, dscp int, t time.Time) (localnet.Seen, bool) {
	var best localnet.Seen
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

// Direction is one direction of a UDP probe stream.
type Direction struct {
	Sent       int           `json:"sent"`
	Received   int           `json:"received"`
	Lost       int           `json:"lost"`
	LongestGap time.Duration `json:"longestGapNs"`
}

func direction(r localnet.ProbeResult) Direction {
	return Direction{Sent: r.Sent, Received: r.Received, Lost: r.Lost, LongestGap: r.LongestGap}
}

// Spread summarises repeated duration samples.
type Spread struct {
	Samples []time.Duration `json:"samplesNs"`
	Min     time.Duration   `json:"minNs"`
	Median  time.Duration   `json:"medianNs"`
	Max     time.Duration   `json:"maxNs"`
}

func spread(samples []time.Duration) Spread {
	s := Spread{Samples: slices.Clone(samples)}
	if len(samples) == 0 {
		return s
	}
	sorted := slices.Clone(samples)
	slices.Sort(sorted)
	s.Min, s.Max = sorted[0], sorted[len(sorted)-1]
	if n := len(sorted); n%2 == 1 {
		s.Median = sorted[n/2]
	} else {
		s.Median = (sorted[n/2-1] + sorted[n/2]) / 2
	}
	return s
}

// since is t - origin, or 0 when t is zero.
func since(origin, t time.Time) time.Duration {
	if t.IsZero() {
		return 0
	}
	return t.Sub(origin)
}
