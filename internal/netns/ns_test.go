package netns

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"os"
	osexec "os/exec"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/nqos/nqos/internal/testenv"
)

// testNS creates namespace nqos-tnl-<role> for one test and deletes it at
// cleanup (a crashed run's leftover is removed first).
func testNS(t *testing.T, role string) NS {
	t.Helper()
	testenv.Root(t, "creates network namespaces")
	name := "nqos-tnl-" + role
	_ = Named(name).Delete()
	n, err := Create(name)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := n.Delete(); err != nil {
			t.Errorf("cleanup: %v", err)
		}
	})
	return n
}

func threadInode() (uint64, error) {
	var st unix.Stat_t
	err := unix.Stat("/proc/thread-self/ns/net", &st)
	return st.Ino, err
}

// TestDo: fn runs inside the namespace, no thread is left in it afterwards,
// and a missing namespace is an error naming it.
func TestDo(t *testing.T) {
	n := testNS(t, "do")
	want, err := n.Inode()
	if err != nil {
		t.Fatal(err)
	}
	home, err := NS{}.Inode()
	if err != nil {
		t.Fatal(err)
	}
	for range 20 {
		var got uint64
		if err := n.Do(func() (err error) { got, err = threadInode(); return err }); err != nil {
			t.Fatal(err)
		}
		if got != want {
			t.Fatalf("fn ran in namespace %d, want %d", got, want)
		}
	}
	var wg sync.WaitGroup
	errs := make(chan error, 50)
	for range 50 {
		wg.Go(func() {
			if ino, err := threadInode(); err != nil || ino != home {
				errs <- fmt.Errorf("a goroutine runs in namespace %d (err %v), want the process's %d", ino, err, home)
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	err = Named("nqos-tnl-missing").Do(func() error { t.Error("fn ran for a missing namespace"); return nil })
	if err == nil || !strings.Contains(err.Error(), "nqos-tnl-missing") {
		t.Errorf("missing namespace: error %v, want one naming it", err)
	}
}

// TestCreateListPidsDelete: a created namespace is listed, its loopback is
// up, a process started in it is found by Pids and reports its namespace,
// and after Delete it is gone.
func TestCreateListPidsDelete(t *testing.T) {
	n := testNS(t, "life")
	if _, err := Create(n.Name()); err == nil {
		t.Error("creating an existing namespace succeeded")
	}
	l, err := List("nqos-tnl-li")
	if err != nil || len(l) != 1 || l[0].Name() != n.Name() {
		t.Fatalf("List = %v, %v; want [%s]", l, err, n.Name())
	}
	c, err := n.Dial()
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	lo, err := c.Link("lo")
	if err != nil || lo.Attrs().Flags&net.FlagUp == 0 {
		t.Fatalf("lo: %v (err %v), want up", lo, err)
	}
	want, _ := n.Inode()
	out, err := n.Output(context.Background(), nil, "stat", "-L", "-c", "%i", "/proc/self/ns/net")
	if err != nil || strings.TrimSpace(out) != fmt.Sprint(want) {
		t.Fatalf("a started command's namespace: %q (err %v), want %d", out, err, want)
	}
	if out, err := n.Output(context.Background(), nil, "cat", "/proc/self/net/dev"); err != nil || strings.Count(out, ":") != 1 || !strings.Contains(out, "lo:") {
		t.Errorf("/proc/self/net/dev of a started command: %q (err %v), want lo alone", out, err)
	}
	if _, err := n.Output(context.Background(), nil, "false"); err == nil || !strings.Contains(err.Error(), n.Name()) {
		t.Errorf("failing command: error %v, want one naming the namespace", err)
	}
	cmd := newChild(t, "sh", "-c", "echo ready; exec cat")
	if err := n.Start(cmd.cmd); err != nil {
		t.Fatal(err)
	}
	cmd.waitLine(t)
	pids, err := n.Pids()
	cmd.finish(t)
	if err != nil || !slices.Contains(pids, cmd.cmd.Process.Pid) {
		t.Errorf("Pids = %v, %v; want it to hold %d", pids, err, cmd.cmd.Process.Pid)
	}
	for range 20 { // whichever threads started them, this process stays out
		if _, err := n.Output(context.Background(), nil, "true"); err != nil {
			t.Fatal(err)
		}
	}
	if pids, err := n.Pids(); err != nil || slices.Contains(pids, os.Getpid()) {
		t.Errorf("Pids = %v, %v; this test process (%d) is not in the namespace", pids, err, os.Getpid())
	}
	other := Named("nqos-tnl-gone")
	_ = other.Delete()
	if _, err := Create(other.Name()); err != nil {
		t.Fatal(err)
	}
	if err := other.Delete(); err != nil {
		t.Fatal(err)
	}
	if ok, err := other.Exists(); ok || err != nil {
		t.Errorf("after Delete: exists %v, %v", ok, err)
	}
	if err := other.Delete(); err == nil || !errorsIsNotExist(err) {
		t.Errorf("deleting a missing namespace: %v, want ErrNotExist", err)
	}
}

func errorsIsNotExist(err error) bool {
	return err != nil && strings.Contains(err.Error(), os.ErrNotExist.Error())
}

// TestVethBridgeAddrs: a veth made across two namespaces has the asked
// names, ifindexes, MAC and MTU; addresses, a bridge, a neighbour, a route
// and sysctls apply; TX checksumming goes off.
func TestVethBridgeAddrs(t *testing.T) {
	a, b := testNS(t, "va"), testNS(t, "vb")
	mac, _ := net.ParseMAC("02:00:00:aa:00:01")
	if err := AddVeth(VethEnd{NS: a, Name: "x0", Index: 4101, MAC: mac, MTU: 1400}, VethEnd{NS: b, Name: "y0", Index: 4102, MTU: 1400}); err != nil {
		t.Fatal(err)
	}
	if err := AddVeth(VethEnd{NS: a, Name: "x1", Index: 4101}, VethEnd{NS: b, Name: "y1", Index: 4104}); err == nil {
		t.Error("a veth reusing ifindex 4101 was created")
	}
	ca, _ := a.Dial()
	cb, _ := b.Dial()
	defer ca.Close()
	defer cb.Close()
	la, err := ca.Link("x0")
	if err != nil {
		t.Fatal(err)
	}
	lb, err := cb.Link("y0")
	if err != nil {
		t.Fatal(err)
	}
	if la.Attrs().Index != 4101 || lb.Attrs().Index != 4102 || la.Attrs().MTU != 1400 || lb.Attrs().MTU != 1400 || la.Attrs().HardwareAddr.String() != mac.String() {
		t.Errorf("ends %+v / %+v", la.Attrs(), lb.Attrs())
	}
	if err := a.TxChecksumOff("x0"); err != nil {
		t.Fatal(err)
	}
	if on, err := a.TxChecksum("x0"); on || err != nil {
		t.Errorf("TX checksumming on %v (err %v), want off", on, err)
	}
	if on, err := b.TxChecksum("y0"); !on || err != nil {
		t.Errorf("TX checksumming of the untouched peer on %v (err %v), want on", on, err)
	}
	if err := cb.AddBridge(Bridge{Name: "br0", MTU: 1400, NoSnooping: true}); err != nil {
		t.Fatal(err)
	}
	for _, step := range []error{cb.SetMaster("y0", "br0"), cb.Up("br0"), cb.Up("y0"), ca.Up("x0"),
		b.Sysctl("net.ipv6.conf.br0.accept_dad", "0"),
		ca.AddAddr("x0", netip.MustParsePrefix("10.9.0.1/24")), ca.AddAddr("x0", netip.MustParsePrefix("fd00:9::1/64")),
		ca.ReplaceAddr("x0", netip.MustParsePrefix("10.9.0.1/24")),
		ca.ReplaceRoute(netip.MustParsePrefix("10.8.0.0/16"), netip.MustParseAddr("10.9.0.2"), "x0"),
		ca.SetNeigh("x0", netip.MustParseAddr("10.9.0.2"), mac, Permanent)} {
		if step != nil {
			t.Fatal(step)
		}
	}
	var dad []byte
	if err := b.Do(func() (err error) { dad, err = os.ReadFile("/proc/sys/net/ipv6/conf/br0/accept_dad"); return err }); err != nil || strings.TrimSpace(string(dad)) != "0" {
		t.Errorf("accept_dad of br0 in %s: %q, %v; want 0", b, dad, err)
	}
	if _, err := os.Stat("/proc/sys/net/ipv6/conf/br0"); err == nil {
		t.Error("the sysctl of br0 is visible in the root namespace")
	}
	if got, err := ca.Neigh("x0", netip.MustParseAddr("10.9.0.2")); err != nil || got.String() != mac.String() {
		t.Errorf("neighbour 10.9.0.2 = %v, %v; want %s", got, err, mac)
	}
	for i := range 2 { // the second delete finds no entry, which is no error
		if err := ca.DelNeigh("x0", netip.MustParseAddr("10.9.0.2")); err != nil {
			t.Fatalf("delete %d of neighbour 10.9.0.2: %v", i+1, err)
		}
	}
	if got, err := ca.Neigh("x0", netip.MustParseAddr("10.9.0.2")); err != nil || got != nil {
		t.Errorf("neighbour 10.9.0.2 after delete = %v, %v; want none", got, err)
	}
	if up, err := ca.Carrier("x0"); !up || err != nil {
		t.Errorf("carrier of x0 with its peer up: %v, %v", up, err)
	}
	got, err := ca.Addrs("x0")
	want := []netip.Prefix{netip.MustParsePrefix("10.9.0.1/24"), netip.MustParsePrefix("fd00:9::1/64")}
	if err != nil || !slices.Equal(got, want) {
		t.Errorf("Addrs = %v, %v; want %v", got, err, want)
	}
	if err := ca.FlushAddrs("x0"); err != nil {
		t.Fatal(err)
	}
	if got, err := ca.Addrs("x0"); err != nil || len(got) != 0 {
		t.Errorf("after flush: %v, %v", got, err)
	}
	if err := ca.Up("nope"); !IsNotFound(err) || !strings.Contains(err.Error(), "nope") {
		t.Errorf("missing link: %v, want a not-found error naming it", err)
	}
	if err := ca.Delete("x0"); err != nil {
		t.Fatal(err)
	}
	if ok, err := cb.Exists("y0"); ok || err != nil {
		t.Errorf("peer after delete: exists %v, %v", ok, err)
	}
}

// TestStartKeepsPdeathsigChildren: starting commands in a namespace never
// ends a thread, so a child another goroutine started with Pdeathsig (as
// the kube-apiserver is) keeps running.
func TestStartKeepsPdeathsigChildren(t *testing.T) {
	n := testNS(t, "pdeath")
	child := osexec.Command("sleep", "60")
	child.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- child.Wait() }()
	t.Cleanup(func() { _ = child.Process.Kill(); <-exited })
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 10 {
				if _, err := n.Output(context.Background(), nil, "true"); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	select {
	case err := <-exited:
		t.Fatalf("the Pdeathsig child exited while commands started in %s: %v", n, err)
	default:
	}
}

// TestAdopt: a namespace held only by a process (as a container's is) is
// bound under a name, entered by it, and unbound by Delete while the
// process keeps it; a path that is no namespace file is refused and
// leaves no name behind.
func TestAdopt(t *testing.T) {
	owner := testNS(t, "own")
	cmd := newChild(t, "sh", "-c", "echo ready; exec cat")
	if err := owner.Start(cmd.cmd); err != nil {
		t.Fatal(err)
	}
	cmd.waitLine(t)
	defer cmd.finish(t)
	want, err := owner.Inode()
	if err != nil {
		t.Fatal(err)
	}
	name := "nqos-tnl-adopted"
	_ = Named(name).Delete()
	n, err := Adopt(name, fmt.Sprintf("/proc/%d/ns/net", cmd.cmd.Process.Pid))
	if err != nil {
		t.Fatal(err)
	}
	if got, err := n.Inode(); err != nil || got != want {
		t.Errorf("adopted namespace inode %d (err %v), want the process's %d", got, err, want)
	}
	if _, err := Adopt(name, fmt.Sprintf("/proc/%d/ns/net", cmd.cmd.Process.Pid)); err == nil {
		t.Error("adopting under a taken name succeeded")
	}
	if err := n.Delete(); err != nil {
		t.Fatal(err)
	}
	if got, err := owner.Inode(); err != nil || got != want {
		t.Errorf("after Delete of the adopted name the owner's namespace is %d (err %v), want %d", got, err, want)
	}
	if _, err := Adopt(name, "/etc/hostname"); err == nil {
		t.Error("adopting a plain file succeeded")
	}
	if ok, err := Named(name).Exists(); ok || err != nil {
		t.Errorf("after a refused Adopt the name exists: %v, %v", ok, err)
	}
}
