package capture

import (
	"context"
	"net"
	"net/netip"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/nqos/nqos/internal/netns"
	"github.com/nqos/nqos/internal/nettest"
	"github.com/nqos/nqos/internal/poll"
)

// ipv4Frame is an Ethernet frame (optionally 802.1Q-tagged) carrying an
// IPv4/UDP datagram with the given DSCP.
func ipv4Frame(vlan uint16, dscp uint8, src, dst netip.Addr) []byte {
	eth := []byte{2, 0, 0, 0, 0, 2, 2, 0, 0, 0, 0, 1}
	if vlan != 0 {
		eth = append(eth, 0x81, 0x00, byte(vlan>>8), byte(vlan))
	}
	eth = append(eth, 0x08, 0x00)
	ip := []byte{0x45, dscp << 2, 0, 28, 0, 0, 0, 0, 64, protoUDP, 0, 0}
	s, d := src.As4(), dst.As4()
	ip = append(append(ip, s[:]...), d[:]...)
	udp := []byte{0x1c, 0x84, 0x1c, 0x84, 0, 8, 0, 0}
	return append(append(eth, ip...), udp...)
}

func TestWatchedPacket(t *testing.T) {
	src, dst := netip.MustParseAddr("10.0.0.1"), netip.MustParseAddr("10.0.0.2")
	at := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	var f frame
	for _, tc := range []struct {
		name  string
		frame []byte
		want  Packet
		ok    bool
	}{
		{"untagged", ipv4Frame(0, 46, src, dst), Packet{At: at, Src: src, Dst: dst, DSCP: 46}, true},
		{"tagged", ipv4Frame(100, 10, src, dst), Packet{At: at, Src: src, Dst: dst, DSCP: 10, VLAN: 100}, true},
		{"ARP is no IP packet", append(make([]byte, 12), 0x08, 0x06, 0, 1), Packet{}, false},
		{"truncated", ipv4Frame(0, 46, src, dst)[:20], Packet{}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := watchedPacket(tc.frame, &f, at)
			if ok != tc.ok || got != tc.want {
				t.Errorf("watchedPacket = %+v, %v; want %+v, %v", got, ok, tc.want, tc.ok)
			}
		})
	}
}

// TestWatchOnLoopback: a watch inside a namespace records the DSCP of
// datagrams sent there with IP_TOS set, and reports no error.
func TestWatchOnLoopback(t *testing.T) {
	ns := nettest.New(t, "capwatch").Netns("w")
	w, err := StartWatch(ns, "lo")
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	var send, recv *net.UDPConn
	err = netns.Named(ns).Do(func() error {
		var err error
		if recv, err = net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 7300}); err != nil {
			return err
		}
		send, err = net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 7301})
		return err
	})
	if recv != nil {
		defer recv.Close()
	}
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
	src := netip.MustParseAddr("127.0.0.1")
	dst := &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 7300}
	err = poll.Until(context.Background(), 5*time.Second, 20*time.Millisecond, "a DSCP 46 datagram on lo", func(context.Context) (bool, error) {
		if _, err := send.WriteToUDP([]byte("x"), dst); err != nil {
			return false, err
		}
		return len(w.Packets(src)) > 0, w.Err()
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range w.Packets(src) {
		if p.DSCP != 46 {
			t.Errorf("packet %v -> %v with DSCP %d, only DSCP 46 was sent", p.Src, p.Dst, p.DSCP)
		}
	}
	if err := w.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
	if err := w.Err(); err != nil {
		t.Errorf("Err after Close: %v", err)
	}
}
