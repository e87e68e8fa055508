package localnet

import (
	"context"
	"net"
	"net/netip"
	"os/exec"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
	"golang.org/x/sys/unix"
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

// threadNetns is the network namespace inode of the calling thread.
func threadNetns(t *testing.T) uint64 {
	t.Helper()
	var st unix.Stat_t
	if err := unix.Stat("/proc/thread-self/ns/net", &st); err != nil {
		t.Fatal(err)
	}
	return st.Ino
}

// TestInNetns: fn runs inside the namespace, the calling thread is back
// in its own namespace afterwards, and an unknown namespace is an error
// naming it that leaves the thread where it was.
func TestInNetns(t *testing.T) {
	name := testNetns(t, "innetns")
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	home := threadNetns(t)
	var inside uint64
	if err := InNetns(name, func() error { inside = threadNetns(t); return nil }); err != nil {
		t.Fatal(err)
	}
	if inside == home || inside == 0 {
		t.Errorf("fn ran in namespace %d, want %s (not the caller's %d)", inside, name, home)
	}
	if got := threadNetns(t); got != home {
		t.Errorf("after InNetns the thread is in namespace %d, want its own %d", got, home)
	}
	err := InNetns(NetnsPrefix("tn")+"missing", func() error { t.Error("fn ran for a missing namespace"); return nil })
	if err == nil || !strings.Contains(err.Error(), "missing") {
		t.Errorf("unknown namespace: error %v, want one naming it", err)
	}
	if got := threadNetns(t); got != home {
		t.Errorf("after a failed InNetns the thread is in namespace %d, want %d", got, home)
	}
}

// testNetns creates namespace nqos-tn-<role> (lo up) for one test and
// deletes it afterwards; it skips without iproute2 or root, and under
// -short.
func testNetns(t *testing.T, role string) string {
	t.Helper()
	if testing.Short() {
		t.Skip("-short: needs root and a network namespace")
	}
	if _, err := exec.LookPath("ip"); err != nil {
		t.Skip("iproute2 not installed")
	}
	name := NetnsPrefix("tn") + role
	r := runner{}
	ctx := context.Background()
	_, _ = r.run(ctx, "", nil, "ip", "netns", "delete", name) // a crashed run's leftover, if any
	if err := r.addNetns(ctx, name); err != nil {
		t.Skipf("cannot create a network namespace (needs root): %v", err)
	}
	t.Cleanup(func() {
		if _, err := r.run(ctx, "", nil, "ip", "netns", "delete", name); err != nil {
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
	err = Poll(context.Background(), 5*time.Second, "a DSCP 46 datagram on lo", func(context.Context) (bool, error) {
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
	w.Close()
	if err := w.Err(); err != nil {
		t.Errorf("Err after Close: %v", err)
	}
}
