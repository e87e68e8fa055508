package kubevirt

import (
	"context"
	"errors"
	"net/netip"
	"strings"
	"testing"

	"github.com/nqos/nqos/internal/testenv"

	"github.com/nqos/nqos/topo/localnet"
)

const dhcpNAD = `apiVersion: k8s.cni.cncf.io/v1
kind: NetworkAttachmentDefinition
metadata: {name: dhcp-net, namespace: vms}
spec:
  config: '{"cniVersion":"1.0.0","name":"dhcp-net","type":"ovn-k8s-cni-overlay","topology":"localnet","physicalNetworkName":"physnet","vlanID":200,"ipam":{"type":"dhcp"},"netAttachDefName":"vms/dhcp-net"}'
`

// TestDualStackAndDHCP runs a dual-stack static VM on the ipamless
// network and a DHCP VM on a DHCP-IPAM network (another VLAN, served by
// dnsmasq on an external host).
func TestDualStackAndDHCP(t *testing.T) {
	blue, err := localnet.DefaultNetwork()
	if err != nil {
		t.Fatal(err)
	}
	dn, err := localnet.NetworksFromManifests(strings.NewReader(dhcpNAD), "dhcp NAD")
	if err != nil {
		t.Fatal(err)
	}
	spec := localnet.Spec{RunID: "t4", IPFamily: localnet.DualStack, Networks: []localnet.Network{blue, dn[0]},
		Hosts: []localnet.HostSpec{
			{Name: "backup", Network: blue.Name, IPv4: "10.20.0.10/16", IPv6: "fd00:20::10/64", IperfPorts: []int{5201}},
			{Name: "dhcp", Network: dn[0].Name, IPv4: "10.30.0.2/16", DHCPRange: "10.30.0.100,10.30.0.150"},
		}}
	tb, kube := bootTestbed(t, spec)
	ctx := context.Background()
	m := NewManager(tb, kube)
	vm1 := VM{Name: "vm1", Namespace: "vms", Node: "node1", Interfaces: []Interface{{NAD: "tenant-blue", MAC: "02:00:00:00:02:01",
		IPv4: "10.20.1.1/16", IPv6: "fd00:20::1:1/64"}}}
	vm2 := VM{Name: "vm2", Namespace: "vms", Node: "node2", Interfaces: []Interface{{NAD: "vms/dhcp-net", MAC: "02:00:00:00:02:02", DHCP: true}}}
	for _, vm := range []VM{vm1, vm2} {
		if err := m.Create(ctx, vm, CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	backup, _ := tb.Host("backup")
	dhcp, _ := tb.Host("dhcp")
	t.Run("IPv6 and IPv4 to the backup server", func(t *testing.T) {
		for _, pair := range [][2]string{{"fd00:20::1:1", backup.IPv6}, {"10.20.1.1", backup.IPv4}} {
			reach(t, endpoint{m.Guest(vm1), pair[0]}, endpoint{backup.Netns, pair[1]}, 20)
			reach(t, endpoint{backup.Netns, pair[1]}, endpoint{m.Guest(vm1), pair[0]}, 20)
		}
	})
	t.Run("IPv6 marking on the fabric", func(t *testing.T) {
		addQoSRow(t, tb, m, vm1)
		w := watchUplink(t, tb, "node1")
		reach(t, endpoint{m.Guest(vm1), "fd00:20::1:1"}, endpoint{backup.Netns, backup.IPv6}, 20)
		for _, s := range seenTo(t, w, netip.MustParseAddr("fd00:20::1:1"), netip.MustParseAddr(backup.IPv6), 20) {
			if s.DSCP != qosDSCP || s.VLAN != 100 {
				t.Fatalf("IPv6 packet to the backup server: DSCP %d VLAN %d, want 46 on VLAN 100", s.DSCP, s.VLAN)
			}
		}
	})
	t.Run("DHCP lease from dnsmasq, frames on VLAN 200", func(t *testing.T) {
		in, err := m.Get("vms", "vm2")
		if err != nil {
			t.Fatal(err)
		}
		lease := netip.MustParsePrefix(in.Leases[0])
		lo, hi := netip.MustParseAddr("10.30.0.100"), netip.MustParseAddr("10.30.0.150")
		if lease.Bits() != 16 || lease.Addr().Less(lo) || hi.Less(lease.Addr()) {
			t.Fatalf("lease %s, want 10.30.0.100-150/16", lease)
		}
		w := watchUplink(t, tb, "node2")
		reach(t, endpoint{m.Guest(vm2), lease.Addr().String()}, endpoint{dhcp.Netns, dhcp.IPv4}, 20)
		for _, s := range seenTo(t, w, lease.Addr(), netip.MustParseAddr(dhcp.IPv4), 20) {
			if s.VLAN != 200 {
				t.Fatalf("packet from %s on VLAN %d, want 200", lease.Addr(), s.VLAN)
			}
		}
	})
	t.Run("DHCP lease in the pod-networks annotation", func(t *testing.T) {
		if kube == nil {
			testenv.Check(t, "the Kubernetes API (launcher pods)", errNoKube)
		}
		checkLeaseAnnotation(t, kube, m, "vms", "vm2", "vms/dhcp-net")
	})
}

// errNoKube: the testbed was booted without the Kubernetes API.
var errNoKube = errors.New("testbed has no Kubernetes API")
