package nbaudit_test

import (
	"testing"
	"time"

	"github.com/nqos/nqos/harness/nbaudit"
	"github.com/nqos/nqos/internal/ovnnb/nbtest"
)

// BenchmarkWatch applies nbtest.BenchWants' objects (two rules, the
// second with a destination address set), then one object per op,
// alternating each object between two versions (one transaction per op),
// with a Watcher attached on its own connection: "audits/tx" is how many
// NB states it audited per committed transaction (1 means none were
// merged or missed) and "drain-ms" how long after the last commit it
// finished auditing the backlog.
func BenchmarkWatch(b *testing.B) {
	ports := nbtest.PortNames("ns.net_ns", nbtest.BenchPorts)
	f := newFixture(b, ports...)
	keys, v := nbtest.BenchWants(ports, func(ver int) []rule {
		return []rule{{DSCP: 46 - ver, Rate: uint32(10000 * (ver + 1)), Burst: 1000}, {DSCP: 10}}
	})
	for i, key := range keys {
		f.Apply(key, v[0][i])
	}
	w := f.watch(nbaudit.Options{})
	cur := make([]int, len(keys))
	tx := 0
	for b.Loop() {
		o := tx % len(keys)
		cur[o] = 1 - cur[o]
		f.Apply(keys[o], v[cur[o]][o])
		tx++
	}
	last := time.Now()
	drained := f.waitChecks(w, 1+tx)
	b.ReportMetric(float64(w.Checks()-1)/float64(max(tx, 1)), "audits/tx")
	b.ReportMetric(float64(drained.Sub(last).Microseconds())/1000, "drain-ms")
	if s := w.Stop(); len(s) != 0 {
		b.Fatalf("sightings while applying: %+v", s)
	}
}
