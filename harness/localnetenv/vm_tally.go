package localnetenv

import (
	"slices"
	"time"

	"github.com/nqos/nqos/topo/localnet"
)

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
