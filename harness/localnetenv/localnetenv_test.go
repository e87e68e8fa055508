package localnetenv

import (
	"testing"

	"github.com/nqos/nqos/harness"
	"github.com/nqos/nqos/internal/kubeapi"
	"github.com/nqos/nqos/internal/testenv"
	"github.com/nqos/nqos/topo/localnet"
)

// requireTestbed gates a test on what a real localnet testbed needs.
// The scenarios themselves are the testbed's end-to-end tests
// (make e2e-localnet); this package's tests only add what a scenario
// cannot show (a seeded bug failing the suite).
func requireTestbed(t *testing.T) {
	t.Helper()
	testenv.Root(t, "boots a real localnet testbed")
	testenv.Binaries(t, "ovsdb-server", "ovs-vswitchd", "ovn-controller", "ovn-northd", "ovn-nbctl", "iperf3", "dnsmasq")
	_, err := kubeapi.BinDir()
	testenv.Check(t, "kube binaries", err)
}

// TestLacksZonesOutsideInterconnect: only the embedded testbed in the
// interconnect topology runs a controller per zone.
func TestLacksZonesOutsideInterconnect(t *testing.T) {
	for _, c := range []struct {
		p    *Provisioner
		want bool
	}{
		{&Provisioner{Topology: localnet.Interconnect}, false},
		{&Provisioner{Topology: localnet.Central}, true},
		{&Provisioner{}, true},
		{&Provisioner{Topology: localnet.Interconnect, Kind: &localnet.KindCluster{Name: "nqos-x"}}, true},
	} {
		if _, lacks := c.p.Lacks()[harness.CapZones]; lacks != c.want {
			t.Errorf("topology %q kind %v: lacks zones %v, want %v", c.p.Topology, c.p.Kind != nil, lacks, c.want)
		}
	}
}

// TestLacksDHCPWithOVNKube: a KinD cluster whose ovnkube makes the
// switches from the NADs cannot run a DHCP-IPAM network (ovnkube refuses
// the NAD); one whose switches the testbed emulates, and the embedded
// testbed, can.
func TestLacksDHCPWithOVNKube(t *testing.T) {
	for _, c := range []struct {
		p    *Provisioner
		want bool
	}{
		{&Provisioner{Topology: localnet.Interconnect}, false},
		{&Provisioner{Kind: &localnet.KindCluster{Name: "nqos-x", LSPs: localnet.KindLSPEmulated}}, false},
		{&Provisioner{Kind: &localnet.KindCluster{Name: "nqos-x", LSPs: localnet.KindLSPOVNKube}}, true},
	} {
		if _, lacks := c.p.Lacks()[harness.CapDHCPNetwork]; lacks != c.want {
			t.Errorf("kind %+v: lacks dhcp-network %v, want %v", c.p.Kind, lacks, c.want)
		}
	}
}
