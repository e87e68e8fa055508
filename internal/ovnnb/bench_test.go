package ovnnb_test

import (
	"fmt"
	"testing"

	"github.com/nqos/nqos/internal/ovnnb"
)

// Benchmark scale: objects sharing one localnet switch, each selecting
// portsPerObject of the switch's ports with three rules and a destination
// address set.
const (
	benchObjects   = 200
	portsPerObject = 20
	benchPorts     = 2000
)

// benchWants builds two versions per object that differ in every kind
// of column Apply handles (members, match, dscp, bandwidth, addresses).
func benchWants(ports []string) (keys []ovnnb.Key, v [2][]ovnnb.ObjectRows) {
	for i := range benchObjects {
		key := ovnnb.Key{Namespace: fmt.Sprintf("ns%03d", i%20), Name: fmt.Sprintf("qos%03d", i)}
		keys = append(keys, key)
		for ver := range 2 {
			first := (i*portsPerObject/2 + ver*portsPerObject/2) % (benchPorts - portsPerObject)
			rows := object(key, i%100, ports[first:first+portsPerObject],
				rule{DSCP: 46 - ver, Rate: uint32(10000 * (ver + 1)), Burst: 1000},
				rule{DSCP: 10, Dest: fmt.Sprintf("ip4.dst == 198.51.%d.0/24", ver)},
				rule{DSCP: 0})
			set := destSet(key, &rows, 2, fmt.Sprintf("203.0.113.%d", ver+1), "192.0.2.1")
			rows.QoS[2].Match += " && ip4.dst == {$" + set + "}"
			v[ver] = append(v[ver], rows)
		}
	}
	return keys, v
}

// benchFixture is an NB with benchPorts ports and benchObjects objects
// applied at version 0.
func benchFixture(b *testing.B) (*fixture, []ovnnb.Key, [2][]ovnnb.ObjectRows) {
	ports := portNames("ns.net_ns", benchPorts)
	f := newFixture(b)
	f.Srv.MustAddPorts(b, testSwitch, ports...)
	f.waitPort(ports[len(ports)-1])
	keys, v := benchWants(ports)
	for i, key := range keys {
		f.Apply(key, v[0][i])
	}
	return f, keys, v
}

// BenchmarkApply measures one object's Apply against a real ovsdb-server
// with benchObjects objects and benchPorts ports: "change" alternates each
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
