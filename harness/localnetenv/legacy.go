package localnetenv

import (
	"context"
	"fmt"
	"slices"
	"strconv"
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
			spec, pg, err := e.legacySpec(want, m)
			if err != nil {
				return fmt.Errorf("zone %s: %w", z.zone.Name, err)
			}
			seeded, err := e.seedLegacyRows(ctx, z.zone, spec)
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

// legacySpec is the legacy form of one object's compiled rows: same
// priority, action, bandwidth and classifier, the source an address set
// of the IPv4 addresses of the scenario VMs in its port group.
func (e *testbedEnv) legacySpec(want qos.Desired, m *scenarios.Manifest) (legacySeed, qos.PortGroup, error) {
	spec := legacySeed{Namespace: m.Namespace, Name: m.Name}
	mine := func(ids map[string]string) bool { return ids[qos.ObjectNameKey] == m.Namespace+":"+m.Name }
	pgs := slices.DeleteFunc(slices.Clone(want.PortGroups), func(pg qos.PortGroup) bool { return !mine(pg.ExternalIDs) })
	switch {
	case len(pgs) != 1:
		return spec, qos.PortGroup{}, fmt.Errorf("legacy rows of %s: it compiles to %d port groups, want 1 (one network)", m.Key(), len(pgs))
	case slices.ContainsFunc(want.AddressSets, func(as qos.AddressSet) bool { return mine(as.ExternalIDs) }):
		return spec, qos.PortGroup{}, fmt.Errorf("legacy rows of %s: it compiles to address sets; legacy seeding supports ipBlock destinations only", m.Key())
	}
	pg := pgs[0]
	ips, err := e.memberIPs(pg)
	if err != nil {
		return spec, pg, fmt.Errorf("legacy rows of %s: %w", m.Key(), err)
	}
	spec.SourceIPs = ips
	for _, row := range want.QoS {
		if !mine(row.ExternalIDs) {
			continue
		}
		r, err := legacyRule(row, pg.Name)
		if err != nil {
			return spec, pg, fmt.Errorf("legacy rows of %s: %w", m.Key(), err)
		}
		spec.Network, spec.Switch = row.ExternalIDs[qos.NetworkKey], row.Switch
		spec.Rules = append(spec.Rules, r)
	}
	slices.SortFunc(spec.Rules, func(a, b legacyQoSRule) int { return a.Index - b.Index })
	return spec, pg, nil
}

// legacyRule is one compiled row with its source fragment cut off.
func legacyRule(row qos.QoSRow, pg string) (legacyQoSRule, error) {
	rest, ok := strings.CutPrefix(row.Match, "inport == @"+pg)
	if !ok {
		return legacyQoSRule{}, fmt.Errorf("compiled match %q does not start with port group %s", row.Match, pg)
	}
	i, err := strconv.Atoi(row.ExternalIDs[qos.RuleIndexKey])
	if err != nil {
		return legacyQoSRule{}, fmt.Errorf("compiled row %q: rule index: %w", row.Match, err)
	}
	r := legacyQoSRule{Index: i, Priority: row.Priority, DSCP: row.Action.DSCP, Rest: rest}
	if row.Bandwidth != nil {
		r.RateKbps, r.BurstKbits = row.Bandwidth.Rate, row.Bandwidth.Burst
	}
	return r, nil
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
