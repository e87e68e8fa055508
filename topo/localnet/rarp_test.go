package localnet

import (
	"context"
	"net"
	"net/netip"
	"testing"
	"time"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
	"golang.org/x/sys/unix"

	"github.com/nqos/nqos/internal/netns"
	"github.com/nqos/nqos/internal/poll"
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

// TestWatchDSCPOnLoopback: a watch inside a namespace records the DSCP
// of datagrams sent there with IP_TOS set, and reports no error.
func TestWatchDSCPOnLoopback(t *testing.T) {
	ns := testNetns(t, "watch")
	w, err := WatchDSCP(ns, "lo")
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	dst := netip.MustParseAddrPort("127.0.0.1:7300")
	recv, err := udpSocket(ns, dst)
	if err != nil {
		t.Fatal(err)
	}
	defer recv.Close()
	send, err := udpSocket(ns, netip.MustParseAddrPort("127.0.0.1:7301"))
	if err != nil {
		t.Fatal(err)
	}
	defer send.Close()
	raw, err := send.SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	var serr error
	if err := raw.Control(func(fd uintptr) { serr = unix.SetsockoptInt(int(fd), unix.IPPROTO_IP, unix.IP_TOS, 46<<2) }); err != nil || serr != nil {
		t.Fatalf("IP_TOS: %v %v", err, serr)
	}
	start := time.Now()
	src := netip.MustParseAddr("127.0.0.1")
	err = poll.Until(context.Background(), 5*time.Second, pollEvery, "a DSCP 46 datagram on lo", func(context.Context) (bool, error) {
		if _, err := send.WriteToUDP([]byte("x"), net.UDPAddrFromAddrPort(dst)); err != nil {
			return false, err
		}
		_, ok := w.FirstMarked(src, 46, start)
		return ok, w.Err()
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range w.Seen(src) {
		if s.DSCP != 46 {
			t.Errorf("packet %v -> %v with DSCP %d, only DSCP 46 was sent", s.Src, s.Dst, s.DSCP)
		}
	}
	if err := w.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
	if err := w.Err(); err != nil {
		t.Errorf("Err after Close: %v", err)
	}
}
