package capture

import (
	"math"
	"time"
)

// Bucket is the streaming token-bucket compliance check of the frames a
// meter let through. For rate r (bit/s) and bucket b (bits, starting full)
// the frames are compliant iff for every i <= j:
//
//	bits(i..j) - r*(t_j - t_i) <= b
//
// MaxExcessBits is the maximum of the left side over all intervals,
// computed in O(n) with a running minimum of the prefix term.
type Bucket struct {
	Key       string
	Flows     []string
	RateBits  float64
	BurstBits float64

	Packets       uint64
	Bytes         uint64 // untagged frame bytes (what the meter counts)
	MaxExcessBits float64
	WorstStart    time.Time // interval reaching MaxExcessBits
	WorstEnd      time.Time
	MaxFrameBits  float64
	Series        []*Series // judged frames per window (meter-counted bytes), one per AnalyzeOptions.Windows

	origin   time.Time
	cum      float64 // bits of frames 0..j
	minB     float64 // min over i of (bits(0..i-1) - r*t_i)
	minBTime time.Time
	first    bool
}

func newBucket(key string, rate, burst float64) *Bucket {
	return &Bucket{Key: key, RateBits: rate, BurstBits: burst, first: true, MaxExcessBits: math.Inf(-1)}
}

// add feeds one passed frame (in capture order).
func (b *Bucket) add(ts time.Time, frameBytes int) {
	bits := float64(frameBytes) * 8
	if b.first {
		b.first = false
		b.origin = ts
		b.minB = math.Inf(1)
	}
	t := ts.Sub(b.origin).Seconds()
	bi := b.cum - b.RateBits*t // prefix term for an interval starting here
	if bi < b.minB {
		b.minB, b.minBTime = bi, ts
	}
	b.cum += bits
	aj := b.cum - b.RateBits*t
	if ex := aj - b.minB; ex > b.MaxExcessBits {
		b.MaxExcessBits, b.WorstStart, b.WorstEnd = ex, b.minBTime, ts
	}
	b.Packets++
	b.Bytes += uint64(frameBytes)
	b.MaxFrameBits = max(b.MaxFrameBits, bits)
}
