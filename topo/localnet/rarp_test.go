package localnet

import (
	"net"
	"testing"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"

	"github.com/nqos/nqos/internal/netns"
	"github.com/nqos/nqos/internal/testenv"
)

func TestRARPFrame(t *testing.T) {
	mac, _ := net.ParseMAC("02:00:00:00:01:01")
	p := gopacket.NewPacket(rarpFrame(mac), layers.LayerTypeEthernet, gopacket.Default)
	eth, ok := p.Layer(layers.LayerTypeEthernet).(*layers.Ethernet)
	if !ok || eth.EthernetType != 0x8035 || eth.SrcMAC.String() != mac.String() || eth.DstMAC.String() != "ff:ff:ff:ff:ff:ff" {
		t.Fatalf("ethernet header %+v", eth)
	}
	f := rarpFrame(mac)
	if op := int(f[20])<<8 | int(f[21]); op != 3 {
		t.Fatalf("opcode %d, want 3 (reverse request)", op)
	}
	if net.HardwareAddr(f[22:28]).String() != mac.String() || net.HardwareAddr(f[32:38]).String() != mac.String() {
		t.Fatal("sender/target hardware address is not the guest MAC")
	}
}

// testNetns creates namespace nqos-tn-<role> (lo up) for one test and
// deletes it afterwards.
func testNetns(t *testing.T, role string) string {
	t.Helper()
	testenv.Root(t, "creates a network namespace")
	name := NetnsPrefix("tn") + role
	_ = netns.Named(name).Delete() // a crashed run's leftover, if any
	n, err := netns.Create(name)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := n.Delete(); err != nil {
			t.Errorf("cleanup: %v", err)
		}
	})
	return name
}
