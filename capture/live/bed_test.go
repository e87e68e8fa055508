package live_test

import (
	"net/netip"
	"testing"

	"github.com/nqos/nqos/internal/nettest"
)

// miniBed is guest -- [node: OVS br0 netdev] -- peer; the capture runs on
// the peer side of the uplink.
type miniBed struct {
	bed               *nettest.Bed
	ovs               *nettest.OVS
	guest, node, peer string
	guestMAC, peerMAC string
	guest4, guest6    netip.Addr
	marked4, marked6  netip.Addr // to these the bridge marks DSCP 46 and meters
	plain4, plain6    netip.Addr // to these it forwards unchanged
	spoofMAC          string
	spoof4            netip.Addr
}

const (
	meterRateKbps  = 100000
	meterBurstKbit = 5000
)

func newMiniBed(t *testing.T, runID string) *miniBed {
	b := nettest.New(t, runID, "iperf3")
	m := &miniBed{bed: b,
		guestMAC: "02:00:00:00:c1:01", peerMAC: "02:00:00:00:c1:02", spoofMAC: "02:00:00:00:c1:77",
		guest4: netip.MustParseAddr("10.99.0.1"), guest6: netip.MustParseAddr("fd99::1"),
		marked4: netip.MustParseAddr("10.99.0.2"), marked6: netip.MustParseAddr("fd99::2"),
		plain4: netip.MustParseAddr("10.99.0.3"), plain6: netip.MustParseAddr("fd99::3"),
		spoof4: netip.MustParseAddr("10.99.0.77"),
	}
	m.guest, m.node, m.peer = b.Netns("guest"), b.Netns("node"), b.Netns("peer")
	b.Veth(nettest.End{Netns: m.guest, Name: "eth0", MAC: m.guestMAC, Index: 101}, nettest.End{Netns: m.node, Name: "g0", Index: 102})
	b.Veth(nettest.End{Netns: m.node, Name: "u0", Index: 103}, nettest.End{Netns: m.peer, Name: "eth0", MAC: m.peerMAC, Index: 104})
	for _, a := range []string{"10.99.0.1/24", "fd99::1/64"} {
		b.Addr(m.guest, "eth0", a)
	}
	for _, a := range []string{"10.99.0.2/24", "10.99.0.3/24", "fd99::2/64", "fd99::3/64"} {
		b.Addr(m.peer, "eth0", a)
	}
	for _, ip := range []netip.Addr{m.marked4, m.marked6, m.plain4, m.plain6} {
		b.Neigh(m.guest, "eth0", ip.String(), m.peerMAC)
	}
	for _, ip := range []netip.Addr{m.guest4, m.guest6, m.spoof4} {
		b.Neigh(m.peer, "eth0", ip.String(), m.guestMAC)
	}
	m.ovs = b.StartOVS(m.node)
	m.ovs.AddNetdevBridge("br0", "g0", "u0")
	m.ovs.Ofctl("add-meter", "br0", "meter=1,kbps,burst,stats,bands=type=drop,rate=100000,burst_size=5000")
	m.ovs.Ofctl("del-flows", "br0")
	for _, f := range []string{
		"priority=100,in_port=1,ip,nw_dst=" + m.marked4.String() + ",actions=meter:1,set_field:46->ip_dscp,output:2",
		"priority=100,in_port=1,ipv6,ipv6_dst=" + m.marked6.String() + ",actions=meter:1,set_field:46->ip_dscp,output:2",
		"priority=0,actions=NORMAL",
	} {
		m.ovs.Ofctl("add-flow", "br0", f)
	}
	return m
}
