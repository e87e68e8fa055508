package live

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
