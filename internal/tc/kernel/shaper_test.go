package kernel

import (
	"net"
	"net/netip"
	"strings"
	"testing"

	"github.com/nqos/nqos/internal/netns"
	"github.com/nqos/nqos/internal/nettest"
	"github.com/nqos/nqos/internal/tc"
	"golang.org/x/sys/unix"
)

// send writes n datagrams of size bytes from 10.99.0.1 to dst:9 with the
// IPv4 TOS byte tos, inside namespace ns.
func send(t *testing.T, ns, dst string, tos, n, size int) {
	t.Helper()
	err := netns.Named(ns).Do(func() error {
		c, err := net.DialUDP("udp4", nil, net.UDPAddrFromAddrPort(netip.MustParseAddrPort(dst+":9")))
		if err != nil {
			return err
		}
		defer c.Close()
		raw, err := c.SyscallConn()
		if err != nil {
			return err
		}
		var serr error
		if err := raw.Control(func(fd uintptr) { serr = unix.SetsockoptInt(int(fd), unix.IPPROTO_IP, unix.IP_TOS, tos) }); err != nil {
			return err
		}
		if serr != nil {
			return serr
		}
		buf := make([]byte, size)
		for i := 0; i < n; i++ {
			if _, err := c.Write(buf); err != nil && !strings.Contains(err.Error(), "no buffer space") {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func stats(t *testing.T, s *Shaper) map[string]tc.ClassStats {
	t.Helper()
	st, err := s.Stats()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]tc.ClassStats{}
	for _, c := range st {
		out[c.Name] = c
	}
	return out
}

func txqlen(t *testing.T, ns, dev string) int {
	t.Helper()
	attrs, err := netns.Named(ns).LinkAttrs(dev)
	if err != nil {
		t.Fatal(err)
	}
	return attrs.TxQLen
}

func TestShaperInNamespace(t *testing.T) {
	b := nettest.New(t, "tct")
	a, z := b.Netns("a"), b.Netns("z")
	b.Veth(nettest.End{Netns: a, Name: "tcta0", Index: 39101}, nettest.End{Netns: z, Name: "tctz0", Index: 39102})
	b.Addr(a, "tcta0", "10.99.0.1/24")
	b.Addr(z, "tctz0", "10.99.0.2/24")
	b.Addr(z, "tctz0", "10.99.0.3/24")
	b.Neigh(a, "tcta0", "10.99.0.2", "02:00:00:00:99:02")
	b.Neigh(a, "tcta0", "10.99.0.3", "02:00:00:00:99:02")

	h := tc.HTB{Ceil: 20e6, Classes: []tc.Class{
		{Name: "ef", Rate: 10e6, DSCP: []int{46}},
		{Name: "slow", Rate: 1e6, Ceil: 1e6, Dst: []netip.Prefix{netip.MustParsePrefix("10.99.0.3/32")}},
		{Name: "rest", Rate: 9e6, Default: true},
	}, QueueLen: 7}
	before := txqlen(t, a, "tcta0")
	s, err := Install(netns.Named(a), "tcta0", h)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Error(err)
		}
	})
	if out := b.RunIn(a, "tc", "class", "show", "dev", "tcta0"); !strings.Contains(out, "class htb 1:10 parent 1:1") {
		t.Fatalf("tc class show: %s", out)
	}
	if got := txqlen(t, a, "tcta0"); got != 7 {
		t.Errorf("txqueuelen while installed: %d, want 7", got)
	}

	send(t, a, "10.99.0.2", 0xb8, 50, 500) // EF by DSCP
	send(t, a, "10.99.0.2", 0, 30, 500)    // unclassified: default
	send(t, a, "10.99.0.3", 0, 120, 1000)  // by destination, into a 1 Mbit/s class (the socket blocks, no drop)
	got := stats(t, s)
	total := func(c tc.ClassStats) uint64 { return c.Packets + c.Drops + c.Queued }
	if ef := got["ef"]; total(ef) != 50 || ef.Drops == 0 {
		t.Errorf("ef class: %+v, want the 50 EF datagrams, some dropped by its 7-packet queue", ef)
	}
	if n := total(got["rest"]); n < 30 || n > 40 {
		t.Errorf("rest class: %+v, want the 30 unmarked datagrams (and at most a few ARP/ND frames)", got["rest"])
	}
	if sl := got["slow"]; sl.Packets+sl.Drops+sl.Queued != 120 || sl.Queued == 0 {
		t.Errorf("slow class: %+v, want the 120 datagrams to 10.99.0.3, some still queued behind its ceiling", sl)
	}

	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if got := txqlen(t, a, "tcta0"); got != before {
		t.Errorf("txqueuelen after Close: %d, want %d as before", got, before)
	}
	if out := b.RunIn(a, "tc", "qdisc", "show", "dev", "tcta0"); strings.Contains(out, "htb") {
		t.Errorf("after Close: %s", out)
	}
	if err := s.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
}

func TestInstallRefusesInvalid(t *testing.T) {
	b := nettest.New(t, "tcu")
	a, z := b.Netns("a"), b.Netns("z")
	b.Veth(nettest.End{Netns: a, Name: "tcua0", Index: 39111}, nettest.End{Netns: z, Name: "tcuz0", Index: 39112})
	bad := lab()
	bad.Classes[1].Rate = 50e6
	if _, err := Install(netns.Named(a), "tcua0", bad); err == nil || !strings.Contains(err.Error(), "tcua0") {
		t.Fatalf("want an error naming the link, got %v", err)
	}
	if _, err := Install(netns.Named(a), "nosuch0", lab()); err == nil || !strings.Contains(err.Error(), "nosuch0") {
		t.Fatalf("want an error naming the missing link, got %v", err)
	}
	if out := b.RunIn(a, "tc", "qdisc", "show", "dev", "tcua0"); strings.Contains(out, "htb") {
		t.Errorf("a refused hierarchy left %s", out)
	}
}
