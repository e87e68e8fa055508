package harness

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/nqos/nqos/harness/results"
	"github.com/nqos/nqos/scenarios"
)

// zonedSim splits the simulated controller's rows into one zone per
// node, as interconnect's zone controllers write them: a zone's port
// groups hold its own VMs' ports; leak (a zone's controller ignoring
// its node) puts every port into zone 0's groups; dropQoS leaves zone 1
// without QoS rows (a zone that has not converged).
type zonedSim struct {
	*simEnv
	leak, dropQoS bool
}

func (z *zonedSim) Topology() string { return "interconnect" }

func (z *zonedSim) Zones() []results.Zone {
	return []results.Zone{{Name: "node1", Nodes: []string{"node1"}, NB: "unix:/z1"}, {Name: "node2", Nodes: []string{"node2"}, NB: "unix:/z2"}}
}

func (z *zonedSim) ZoneRows(context.Context) ([]ZoneRows, error) {
	all := z.rows()
	var out []ZoneRows
	for i := range 2 {
		var ports []string
		for j := range z.sc.Topology.VMs {
			if vm := &z.sc.Topology.VMs[j]; vm.Node == i {
				ports = append(ports, z.world.Port(vm))
			}
		}
		d := all
		d.PortGroups = nil
		for _, pg := range all.PortGroups {
			if !(z.leak && i == 0) {
				pg.Ports = slices.DeleteFunc(slices.Clone(pg.Ports), func(p string) bool { return !slices.Contains(ports, p) })
			}
			d.PortGroups = append(d.PortGroups, pg)
		}
		if z.dropQoS && i == 1 {
			d.QoS = nil
		}
		out = append(out, ZoneRows{Zone: z.Zones()[i].Name, Rows: d, Ports: ports})
	}
	return out, nil
}

// zonedProv provisions one prepared zonedSim.
type zonedProv struct{ env *zonedSim }

func (p zonedProv) Provision(context.Context, *scenarios.Scenario, []scenarios.Family, string) (Env, error) {
	return p.env, nil
}

func (zonedProv) Lacks() map[Capability]string { return nil }

func TestZonedRowChecks(t *testing.T) {
	sc := builtin(t, "story1-tiers")
	res, _ := runOne(t, sc, zonedProv{&zonedSim{simEnv: newSim(sc, "23.03.1")}}, ModeV4)
	if res.Status != results.Pass {
		t.Fatalf("per-zone rows of a correct split: %s %s", res.Status, res.Error)
	}
	if res.Topology != "interconnect" || len(res.Zones) != 2 || res.Zones[1].NB != "unix:/z2" {
		t.Errorf("result topology %q zones %+v", res.Topology, res.Zones)
	}
	for _, c := range []struct {
		name string
		env  *zonedSim
		want string
	}{
		{"a zone holding another zone's port", &zonedSim{leak: true}, "zone node1: NetworkQoS vms/baseline: port group members"},
		{"a zone without the QoS rows", &zonedSim{dropQoS: true}, "zone node2: NetworkQoS vms/tier-production: no QoS row for rule 0"},
	} {
		t.Run(c.name, func(t *testing.T) {
			sc := builtin(t, "story1-tiers")
			for i := range sc.Steps {
				if w := sc.Steps[i].Wait; w != nil {
					w.Timeout = 50 * time.Millisecond
				}
			}
			c.env.simEnv = newSim(sc, "23.03.1")
			res, _ := runOne(t, sc, zonedProv{c.env}, ModeV4)
			if res.Status != results.Fail || !strings.Contains(res.Error, c.want) {
				t.Errorf("status %s error %q, want a failure containing %q", res.Status, res.Error, c.want)
			}
		})
	}
}

func TestZoneRowsOfAPlainEnv(t *testing.T) {
	sc := builtin(t, "story1-tiers")
	ex := &execution{env: newSim(sc, "23.03.1")}
	zs, err := ex.zoneRows(context.Background())
	if err != nil || len(zs) != 1 || zs[0].Ports != nil || zs[0].prefix(len(zs)) != "" {
		t.Fatalf("zone rows of an unzoned env %+v (%v), want one unnamed zone without a port filter", zs, err)
	}
}
