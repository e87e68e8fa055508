package capture

import (
	"math"
	"math/rand/v2"
	"testing"
	"time"
)

// bruteExcess is the O(n^2) definition: max over i <= j of bits(i..j) - r*(t_j - t_i).
func bruteExcess(ts []time.Time, sizes []int, rate float64) float64 {
	best := math.Inf(-1)
	for i := range ts {
		bits := 0.0
		for j := i; j < len(ts); j++ {
			bits += float64(sizes[j]) * 8
			best = max(best, bits-rate*ts[j].Sub(ts[i]).Seconds())
		}
	}
	return best
}

func TestBucketMatchesBruteForce(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for trial := range 50 {
		n := 1 + rng.IntN(300)
		rate := 1e6 * float64(1+rng.IntN(200))
		ts := make([]time.Time, n)
		sizes := make([]int, n)
		at := time.Unix(1000, 0)
		b := newBucket("m", rate, 1e6)
		for i := range n {
			at = at.Add(time.Duration(rng.IntN(200_000))) // 0..200us gaps, bursts included
			ts[i], sizes[i] = at, 60+rng.IntN(1455)
			b.add(ts[i], sizes[i])
		}
		want := bruteExcess(ts, sizes, rate)
		if math.Abs(b.MaxExcessBits-want) > 1e-6*math.Max(1, math.Abs(want)) {
			t.Fatalf("trial %d (n=%d rate=%g): O(n) excess %f, brute force %f", trial, n, rate, b.MaxExcessBits, want)
		}
		if got := b.WorstEnd.Sub(b.WorstStart); got < 0 {
			t.Fatalf("trial %d: worst interval reversed: %s", trial, got)
		}
	}
}

func TestSeriesWindows(t *testing.T) {
	origin := time.Unix(0, 0)
	s := newSeries(100*time.Millisecond, origin)
	for _, c := range []struct {
		at    time.Duration
		bytes int
	}{{0, 100}, {99 * time.Millisecond, 100}, {100 * time.Millisecond, 50}, {350 * time.Millisecond, 10}, {-time.Millisecond, 999}} {
		s.add(origin.Add(c.at), c.bytes)
	}
	want := []uint64{200, 50, 0, 10}
	if len(s.Windows) != len(want) {
		t.Fatalf("windows = %d, want %d", len(s.Windows), len(want))
	}
	for i, w := range want {
		if s.Windows[i].Bytes != w {
			t.Errorf("window %d bytes = %d, want %d", i, s.Windows[i].Bytes, w)
		}
	}
	if got := s.Windows[0].BitsPerSecond(s.Size); got != 16000 {
		t.Errorf("rate = %v, want 16000", got)
	}
	if s.MaxBytes() != 200 {
		t.Errorf("max = %d", s.MaxBytes())
	}
}
