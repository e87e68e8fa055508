package localnetenv

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"slices"
	"sort"
	"strings"

	"github.com/nqos/nqos/harness"
	"github.com/nqos/nqos/harness/results"
	"github.com/nqos/nqos/internal/ovnnb"
	"github.com/nqos/nqos/internal/qos"
	"github.com/nqos/nqos/topo/localnet"
)

// zoneNB is one zone of the testbed and the harness's NB client on it.
type zoneNB struct {
	zone localnet.Zone
	nb   *ovnnb.Client
}

// node is the --node the zone's controller runs with: the zone's node on
// interconnect, "" for the one central zone (GlobalZone).
func (z zoneNB) node() string {
	if z.zone.Name == localnet.GlobalZone {
		return ""
	}
	return z.zone.Name
}

// dialZones connects one NB client per zone; e.nb is the first zone's.
func (e *testbedEnv) dialZones(ctx context.Context, log *slog.Logger) error {
	for _, z := range e.tb.Zones() {
		nb, err := ovnnb.Dial(ctx, z.NB, log)
		if err != nil {
			return fmt.Errorf("NB client of zone %s: %w", z.Name, err)
		}
		e.zones = append(e.zones, zoneNB{zone: z, nb: nb})
	}
	e.nb = e.zones[0].nb
	return nil
}

func (e *testbedEnv) closeZones() {
	for _, z := range e.zones {
		z.nb.Close()
	}
	e.zones, e.nb = nil, nil
}

// ZoneRows returns each zone's NetworkQoS-owned rows and the logical
// switch ports its NB holds, in zone order; a failed read is an error.
func (e *testbedEnv) ZoneRows(ctx context.Context) ([]harness.ZoneRows, error) {
	out := make([]harness.ZoneRows, 0, len(e.zones))
	for _, z := range e.zones {
		rows, err := z.nb.Rows(ctx)
		if err != nil {
			return nil, fmt.Errorf("zone %s: %w", z.zone.Name, err)
		}
		ports, err := e.zonePorts(ctx, z.zone)
		if err != nil {
			return nil, err
		}
		out = append(out, harness.ZoneRows{Zone: z.zone.Name, Rows: rows, Ports: ports})
	}
	return out, nil
}

// zonePorts are the names of every logical switch port in a zone's NB.
func (e *testbedEnv) zonePorts(ctx context.Context, z localnet.Zone) ([]string, error) {
	out, err := e.tb.ZoneNBCtl(ctx, z, "--bare", "--columns=name", "list", "Logical_Switch_Port")
	if err != nil {
		return nil, err
	}
	ports := strings.Fields(out)
	sort.Strings(ports)
	return ports, nil
}

// Rows returns the NetworkQoS-owned rows of every zone merged (see
// mergeZoneRows); a failed read is an error.
func (e *testbedEnv) Rows(ctx context.Context) (qos.Desired, error) {
	var all []qos.Desired
	for _, z := range e.zones {
		rows, err := z.nb.Rows(ctx)
		if err != nil {
			return qos.Desired{}, fmt.Errorf("zone %s: %w", z.zone.Name, err)
		}
		all = append(all, rows)
	}
	return mergeZoneRows(all), nil
}

// mergeZoneRows is the cluster-wide view of per-zone rows: port groups of
// one name are one group holding every zone's members (a zone's group
// can only hold that zone's ports); QoS rows and address sets equal in
// every zone appear once, and any that differ between zones appear once
// per variant, so an expectation of one row fails while zones disagree.
// With one zone it is that zone's rows.
func mergeZoneRows(zs []qos.Desired) qos.Desired {
	if len(zs) == 1 {
		return zs[0]
	}
	out := qos.Desired{NetworkQoS: []qos.ObjectStatus{}, PortGroups: []qos.PortGroup{}, AddressSets: []qos.AddressSet{},
		QoS: []qos.QoSRow{}, Warnings: []string{}}
	pgs := map[string]int{}
	seen := map[string]bool{}
	for _, d := range zs {
		for _, pg := range d.PortGroups {
			i, ok := pgs[pg.Name]
			if !ok {
				pgs[pg.Name] = len(out.PortGroups)
				pg.Ports = slices.Clone(pg.Ports)
				out.PortGroups = append(out.PortGroups, pg)
				continue
			}
			out.PortGroups[i].Ports = append(out.PortGroups[i].Ports, pg.Ports...)
		}
		for _, q := range d.QoS {
			if k := "qos|" + jsonKey(q); !seen[k] {
				seen[k] = true
				out.QoS = append(out.QoS, q)
			}
		}
		for _, as := range d.AddressSets {
			if k := "as|" + jsonKey(as); !seen[k] {
				seen[k] = true
				out.AddressSets = append(out.AddressSets, as)
			}
		}
		out.Warnings = append(out.Warnings, d.Warnings...)
	}
	for i := range out.PortGroups {
		slices.Sort(out.PortGroups[i].Ports)
		out.PortGroups[i].Ports = slices.Compact(out.PortGroups[i].Ports)
	}
	sort.Slice(out.PortGroups, func(i, j int) bool { return out.PortGroups[i].Name < out.PortGroups[j].Name })
	sort.Slice(out.AddressSets, func(i, j int) bool { return out.AddressSets[i].Name < out.AddressSets[j].Name })
	sort.SliceStable(out.QoS, func(i, j int) bool { return jsonKey(out.QoS[i]) < jsonKey(out.QoS[j]) })
	slices.Sort(out.Warnings)
	out.Warnings = slices.Compact(out.Warnings)
	return out
}

// jsonKey is a row's canonical JSON (maps are encoded sorted).
func jsonKey(v any) string {
	raw, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprintf("%#v", v)
	}
	return string(raw)
}

// zoneOfVM is the zone of the node a VM runs on now.
func (e *testbedEnv) zoneOfVM(namespace, name string) (zoneNB, error) {
	in, err := e.vms.Get(namespace, name)
	if err != nil {
		return zoneNB{}, err
	}
	for _, z := range e.zones {
		if z.zone.Has(in.Node) {
			return z, nil
		}
	}
	return zoneNB{}, fmt.Errorf("VM %s/%s: no zone holds its node %s", namespace, name, in.Node)
}

// Zones describes the testbed's zones for the report.
func (e *testbedEnv) Zones() []results.Zone {
	out := make([]results.Zone, 0, len(e.zones))
	for _, z := range e.zones {
		out = append(out, results.Zone{Name: z.zone.Name, Nodes: z.zone.Nodes, NB: z.zone.NB})
	}
	return out
}

// Topology is the testbed's control-plane topology.
func (e *testbedEnv) Topology() string { return string(e.tb.Topology()) }
