package ovnnb_test

import (
	"fmt"
	"testing"

	"github.com/nqos/nqos/internal/ovnnb"
	"github.com/nqos/nqos/internal/ovnnb/nbtest"
)

// benchFixture is an NB with nbtest.BenchPorts ports and
// nbtest.BenchObjects objects applied at version 0. Each object has
// three rules, the last with a destination address set; its two
// versions differ in every kind of column Apply handles (members, match,
// dscp, bandwidth, addresses).
func benchFixture(b *testing.B) (*fixture, []ovnnb.Key, [2][]ovnnb.ObjectRows) {
	ports := portNames("ns.net_ns", nbtest.BenchPorts)
	f := newFixture(b)
	f.Srv.MustAddPorts(b, testSwitch, ports...)
	f.waitPort(ports[len(ports)-1])
	keys, v := nbtest.BenchWants(ports, func(ver int) []rule {
		return []rule{{DSCP: 46 - ver, Rate: uint32(10000 * (ver + 1)), Burst: 1000},
			{DSCP: 10, Dest: fmt.Sprintf("ip4.dst == 198.51.%d.0/24", ver)}, {DSCP: 0}}
	})
	for i, key := range keys {
		f.Apply(key, v[0][i])
	}
	return f, keys, v
}

// BenchmarkApply measures one object's Apply against a real ovsdb-server
// with nbtest.BenchObjects objects and nbtest.BenchPorts ports: "change" alternates each
// object between two versions (one transaction per op), "noop" re-applies
// the current version (no transaction).
func BenchmarkApply(b *testing.B) {
	f, keys, v := benchFixture(b)
	cur := make([]int, len(keys))

	b.Run("change", func(b *testing.B) {
		tx, ops := applyLoop(b, f, keys, v, cur, true)
		b.ReportMetric(float64(tx)/float64(ops), "tx/op")
	})
	b.Run("noop", func(b *testing.B) {
		tx, ops := applyLoop(b, f, keys, v, cur, false)
		b.ReportMetric(float64(tx)/float64(ops), "tx/op")
	})
}

// applyLoop applies one object per benchmark op, round robin, flipping
// its version first when flip is set; it counts transactions and ops.
func applyLoop(b *testing.B, f *fixture, keys []ovnnb.Key, v [2][]ovnnb.ObjectRows, cur []int, flip bool) (tx, ops int) {
	for b.Loop() {
		o := ops % len(keys)
		if flip {
			cur[o] = 1 - cur[o]
		}
		if f.Apply(keys[o], v[cur[o]][o]).Changed {
			tx++
		}
		ops++
	}
	return tx, max(ops, 1)
}
