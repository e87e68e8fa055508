package lifeprobe

import (
	"slices"
	"time"
)

// Direction is one direction of a UDP probe stream.
type Direction struct {
	Sent       int           `json:"sent"`
	Received   int           `json:"received"`
	Lost       int           `json:"lost"`
	LongestGap time.Duration `json:"longestGapNs"`
}

// Sum adds two stretches of one direction.
func Sum(a, b Direction) Direction {
	return Direction{Sent: a.Sent + b.Sent, Received: a.Received + b.Received, Lost: a.Lost + b.Lost,
		LongestGap: max(a.LongestGap, b.LongestGap)}
}

// Spread summarises repeated duration samples.
type Spread struct {
	Samples []time.Duration `json:"samplesNs"`
	Min     time.Duration   `json:"minNs"`
	Median  time.Duration   `json:"medianNs"`
	Max     time.Duration   `json:"maxNs"`
}

// NewSpread summarises samples (zero figures for none).
func NewSpread(samples []time.Duration) Spread {
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

// Since is t - origin, or 0 when t is zero (never seen).
func Since(origin, t time.Time) time.Duration {
	if t.IsZero() {
		return 0
	}
	return t.Sub(origin)
}
