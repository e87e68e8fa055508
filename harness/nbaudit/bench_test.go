package nbaudit_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/nqos/nqos/harness/nbaudit"
	"github.com/nqos/nqos/internal/ovnnb"
)

// Benchmark scale: objects sharing one localnet switch, each selecting
// portsPerObject of the switch's ports with two rules and a destination
// address set.
const (
	benchObjects   = 200
	portsPerObject = 20
	benchPorts     = 2000
)

// BenchmarkWatch applies one object per op, alternating each object
// between two versions (one transaction per op), with a Watcher attached
// on its own connection: "audits/tx" is how many NB states it audited per
// committed transaction (1 means none were merged or missed) and
// "drain-ms" how long after the last commit it finished auditing the
// backlog.
func BenchmarkWatch(b *testing.B) {
	ports := make([]string, benchPorts)
	for i := range ports {
		ports[i] = fmt.Sprintf("ns.net_ns_vm%04d", i)
	}
	f := newFixture(b, ports...)
	var keys []ovnnb.Key
	var v [2][]ovnnb.ObjectRows
	for i := range benchObjects {
		key := ovnnb.Key{Namespace: fmt.Sprintf("ns%03d", i%20), Name: fmt.Sprintf("qos%03d", i)}
		keys = append(keys, key)
		for ver := range 2 {
			first := (i*portsPerObject/2 + ver*portsPerObject/2) % (benchPorts - portsPerObject)
			rows := object(key, i%100, ports[first:first+portsPerObject],
				rule{DSCP: 46 - ver, Rate: uint32(10000 * (ver + 1)), Burst: 1000}, rule{DSCP: 10})
			destSet(key, &rows, 1, fmt.Sprintf("203.0.113.%d", ver+1), "192.0.2.1")
			v[ver] = append(v[ver], rows)
		}
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
