package localnetenv

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/nqos/nqos/internal/qos"
	"github.com/nqos/nqos/scenarios"
)

// seedLegacy derives each object's legacy rows from the compiler's rows
// for every zone (interconnect: the zone's node's pods, as a zone's
// controller wrote them) and seeds them into that zone's NB; run.objects
// are the watched zone's (the one whose NB the step monitors).
func (e *testbedEnv) seedLegacy(ctx context.Context, legacy []*scenarios.Manifest, run *upgradeRun, watched string) error {
	for _, z := range e.zones {
		in, err := e.clusterInput(ctx, z.node())
		if err != nil {
			return err
		}
		want := qos.Compile(in)
		for _, m := range legacy {
			pg, seeded, err := e.seedLegacyRows(ctx, z.zone, want, m)
			if err != nil {
				return fmt.Errorf("zone %s: %w", z.zone.Name, err)
			}
			if z.zone.Name == watched {
				run.objects = append(run.objects, legacyObject{Key: m.Namespace + "/" + m.Name, PG: pg.Name, Ports: len(pg.Ports), Seeded: seeded})
			}
		}
	}
	run.seededAt = time.Now()
	return nil
}

// ownedBy reports whether a row's external_ids name the NetworkQoS of m.
func ownedBy(ids map[string]string, m *scenarios.Manifest) bool {
	return ids[qos.ObjectNameKey] == m.Namespace+":"+m.Name
}

// legacySource is the port group m compiles to and the source of its
// legacy rows: the IPv4 addresses of the scenario VMs in that group.
func (e *testbedEnv) legacySource(want qos.Desired, m *scenarios.Manifest) (qos.PortGroup, []string, error) {
	pgs := slices.DeleteFunc(slices.Clone(want.PortGroups), func(pg qos.PortGroup) bool { return !ownedBy(pg.ExternalIDs, m) })
	switch {
	case len(pgs) != 1:
		return qos.PortGroup{}, nil, fmt.Errorf("legacy rows of %s: it compiles to %d port groups, want 1 (one network)", m.Key(), len(pgs))
	case slices.ContainsFunc(want.AddressSets, func(as qos.AddressSet) bool { return ownedBy(as.ExternalIDs, m) }):
		return qos.PortGroup{}, nil, fmt.Errorf("legacy rows of %s: it compiles to address sets; legacy seeding supports ipBlock destinations only", m.Key())
	}
	ips, err := e.memberIPs(pgs[0])
	if err != nil {
		return pgs[0], nil, fmt.Errorf("legacy rows of %s: %w", m.Key(), err)
	}
	return pgs[0], ips, nil
}

// memberIPs are the IPv4 addresses of the scenario VMs whose port is in
// the port group (what the legacy generation's source set held).
func (e *testbedEnv) memberIPs(pg qos.PortGroup) ([]string, error) {
	var ips []string
	for i := range e.sc.Topology.VMs {
		vm := &e.sc.Topology.VMs[i]
		port, err := e.PortName(vm)
		if err != nil || !slices.Contains(pg.Ports, port) || vm.Addresses.V4 == "" {
			continue // a late VM that is not started has no port
		}
		ip, _, _ := strings.Cut(vm.Addresses.V4, "/")
		ips = append(ips, ip)
	}
	if len(ips) == 0 {
		return nil, fmt.Errorf("no VM with an IPv4 address is in port group %s", pg.Name)
	}
	slices.Sort(ips)
	return ips, nil
}
