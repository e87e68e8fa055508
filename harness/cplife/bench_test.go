package cplife

import (
	"net/netip"
	"testing"
	"time"

	"github.com/nqos/nqos/topo/localnet"
)

// BenchmarkAnalyzeMarks: one minute of a 500/s stream plus a 1500/s
// policed flow, the log size the daemon test analyses per window.
func BenchmarkAnalyzeMarks(b *testing.B) {
	dst, other := netip.MustParseAddr("10.20.0.10"), netip.MustParseAddr("10.20.0.20")
	var seen []localnet.Seen
	for i := range 120000 {
		d, dscp := dst, 46
		if i%4 != 0 {
			d, dscp = other, 10
		}
		seen = append(seen, localnet.Seen{At: t0.Add(time.Duration(i) * 500 * time.Microsecond), Dst: d, DSCP: dscp})
	}
	b.ReportAllocs()
	for b.Loop() {
		AnalyzeMarks(seen, dst, 46, t0, t0.Add(time.Minute))
	}
}
