package cplife

import (
	"strings"
	"testing"
	"time"

	"github.com/nqos/nqos/harness/nbaudit"
	"github.com/nqos/nqos/internal/ovnnb"
	"github.com/nqos/nqos/internal/qos"
	"github.com/nqos/nqos/topo/localnet"
)

// ipamNAD is an OVN-K IPAM localnet network (subnets set) on physnet,
// VLAN 100, so pods carry their IPs in k8s.ovn.org/pod-networks.
const ipamNAD = `apiVersion: k8s.cni.cncf.io/v1
kind: NetworkAttachmentDefinition
metadata:
  name: tenant-ipam
  namespace: vms
  labels:
    nqos-network: tenant-ipam
spec:
  config: '{"cniVersion":"1.0.0","name":"tenant-ipam","type":"ovn-k8s-cni-overlay","topology":"localnet","physicalNetworkName":"physnet","vlanID":100,"subnets":"10.20.0.0/16","netAttachDefName":"vms/tenant-ipam"}'
`

// legacyFromCompile derives the legacy rows of one object from the
// compiler's rows: same priority, action, bandwidth and classifier; the
// source fragment is the address set holding the pods' IPs.
func legacyFromCompile(t *testing.T, d qos.Desired, key ovnnb.Key, network string, ips []string) (LegacySpec, string) {
	t.Helper()
	spec := LegacySpec{Namespace: key.Namespace, Name: key.Name, Network: network, SourceIPs: ips}
	if len(d.PortGroups) != 1 {
		t.Fatalf("compiled %d port groups, want 1: %+v", len(d.PortGroups), d.PortGroups)
	}
	pg := d.PortGroups[0].Name
	for i, row := range d.QoS {
		rest, ok := strings.CutPrefix(row.Match, "inport == @"+pg)
		if !ok {
			t.Fatalf("compiled match %q does not start with the port group", row.Match)
		}
		r := LegacyRule{Index: i, Priority: row.Priority, DSCP: row.Action.DSCP, Rest: rest}
		if row.Bandwidth != nil {
			r.RateKbps, r.BurstKbits = row.Bandwidth.Rate, row.Bandwidth.Burst
		}
		spec.Switch = row.Switch
		spec.Rules = append(spec.Rules, r)
	}
	return spec, pg
}

// Scenario 6: the NB holds legacy rows whose source is an address set of
// the VMs' IPs (as the previous upstream generation wrote them) and
// marks their traffic; the controller starts and migrates them. No packet
// goes unmarked on the wire, the legacy set is deleted only in a
// transaction after the one that rewrote the row, and the NB ends equal
// to the compiler's rows.
func TestLegacyUpgrade(t *testing.T) {
	nets, err := localnet.NetworksFromManifests(strings.NewReader(ipamNAD), "ipamNAD")
	if err != nil {
		t.Fatal(err)
	}
	e := newEnv(t, "p3", nets)
	nad := "vms/tenant-ipam"
	e.vm("vm-a", 0, "gold", nad, "10.20.1.1/16", mac(1))
	e.vm("vm-b", 1, "gold", nad, "10.20.1.2/16", mac(2))
	backup := e.host("backup")
	key := ovnnb.Key{Namespace: vmNamespace, Name: "gold"}
	e.apply(NetworkQoSSpec{Namespace: key.Namespace, Name: key.Name, Priority: 60, Pods: map[string]string{"tier": "gold"},
		NADLabels: map[string]string{"nqos-network": "tenant-ipam"},
		Rules:     []RuleSpec{{DSCP: 46, CIDRs: []string{backup.IPv4 + "/32"}}}})
	in, err := e.cl.Input(e.ctx)
	if err != nil {
		t.Fatal(err)
	}
	legacy, pg := legacyFromCompile(t, qos.Compile(in), key, nets[0].Name, []string{"10.20.1.1", "10.20.1.2"})
	seeded, err := SeedLegacy(e.ctx, e.tb, legacy)
	if err != nil {
		t.Fatal(err)
	}
	logJSON(t, "seeded legacy rows", seeded)
	if err := e.tb.WaitHVSync(e.ctx); err != nil {
		t.Fatal(err)
	}
	streams := []*Stream{
		e.stream("vm-a", 0, "10.20.1.1/16", backup, 7100, 46),
		e.stream("vm-b", 1, "10.20.1.2/16", backup, 7101, 46),
	}
	for _, s := range streams { // the legacy rows mark before any controller runs
		if _, err := s.WaitMarkedRun(e.ctx, time.Now().Add(-time.Minute), 200, 30*time.Second); err != nil {
			t.Fatalf("legacy marking: %v", err)
		}
	}
	mon, err := StartNBMonitor(e.ctx, e.tb.NBAddress())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(mon.Close)
	w := nbaudit.Watch(e.ctx, e.tb.NBAddress(), nbaudit.Options{})
	started := time.Now()
	e.startController()
	e.converge("after migration")
	for _, s := range streams { // marking continues on the migrated rows
		if _, err := s.WaitMarkedRun(e.ctx, time.Now(), 200, 30*time.Second); err != nil {
			t.Fatal(err)
		}
	}
	order, err := LegacyMigrationOrder(mon.Transactions(0), seeded, pg)
	logJSON(t, "migration order", order)
	if err != nil {
		t.Errorf("migration order: %v", err)
	}
	t.Logf("controller start to synced: %v", e.ctrl.SyncedAt().Sub(started))
	noSightings(t, w)
	for _, s := range streams {
		checkStream(t, s.Stop(), maxMarkGap)
	}
}
