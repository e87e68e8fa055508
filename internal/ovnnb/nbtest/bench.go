package nbtest

import (
	"fmt"

	"github.com/nqos/nqos/internal/ovnnb"
)

// The scale of the Northbound benchmarks: BenchObjects objects sharing
// one switch's BenchPorts ports, each selecting BenchPortsPerObject of
// them.
const (
	BenchObjects        = 200
	BenchPortsPerObject = 20
	BenchPorts          = 2000
)

// BenchWants builds two versions of each of BenchObjects objects on the
// Fixture's network, over 20 namespaces. Version ver of an object selects
// its own window of BenchPortsPerObject of ports and has rules(ver); the
// last rule's match also names a destination address set whose addresses
// differ between the versions.
func BenchWants(ports []string, rules func(ver int) []Rule) (keys []ovnnb.Key, v [2][]ovnnb.ObjectRows) {
	for i := range BenchObjects {
		key := ovnnb.Key{Namespace: fmt.Sprintf("ns%03d", i%20), Name: fmt.Sprintf("qos%03d", i)}
		keys = append(keys, key)
		for ver := range 2 {
			first := (i*BenchPortsPerObject/2 + ver*BenchPortsPerObject/2) % (len(ports) - BenchPortsPerObject)
			rs := rules(ver)
			rows := FixtureObject(key, i%100, ports[first:first+BenchPortsPerObject], rs...)
			DestMatch(key, &rows, len(rs)-1, fmt.Sprintf("203.0.113.%d", ver+1), "192.0.2.1")
			v[ver] = append(v[ver], rows)
		}
	}
	return keys, v
}
