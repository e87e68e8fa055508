package localnet

import (
	"context"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/nqos/nqos/internal/netns"
	"github.com/nqos/nqos/internal/ovninstall"
	"github.com/nqos/nqos/internal/poll"
	"github.com/nqos/nqos/internal/testenv"
)

func requireTools(t testing.TB) {
	t.Helper()
	testenv.Root(t, "boots a real OVN testbed")
	testenv.Binaries(t, requiredTools...)
}

func startTestbed(t *testing.T, spec Spec) *Testbed { return StartTB(t, spec) }

// TestUpDown boots and checks the testbed on every OVN version.
func TestUpDown(t *testing.T) {
	ovninstall.ForEach(t, func(t *testing.T, _ ovninstall.Install) { testUpDown(t) })
}

func testUpDown(t *testing.T) {
	tb := startTestbed(t, Spec{RunID: "t1"})
	ctx := context.Background()
	st, err := RunStatus(ctx, "t1")
	if err != nil {
		t.Fatal(err)
	}
	if !st.Healthy() || len(st.Nodes) != 2 || len(st.Hosts) != 3 || len(st.Daemons) != 15 {
		t.Fatalf("status: healthy %v nodes %d hosts %d daemons %d", st.Healthy(), len(st.Nodes), len(st.Hosts), len(st.Daemons))
	}
	out, err := tb.NBCtl(ctx, "--format=json", "--columns=name,tag,options,addresses", "find", "Logical_Switch_Port", "type=localnet")
	if err != nil {
		t.Fatal(err)
	}
	tbl, err := decodeTable(out, "localnet ports")
	if err != nil || len(tbl.Data) != 1 {
		t.Fatalf("localnet ports %s (%v)", out, err)
	}
	for col, want := range map[string]string{"name": `"tenant.blue_ovn_localnet_port"`, "tag": "100",
		"options": `["map",[["network_name","physnet"]]]`, "addresses": `"unknown"`} {
		if got := string(tbl.column(col)[0]); got != want {
			t.Errorf("localnet port %s = %s, want %s", col, got, want)
		}
	}
	for _, n := range tb.Nodes() {
		got, err := tb.VSCtl(ctx, n.Name, "get", "Open_vSwitch", ".", "external_ids:ovn-ofctrl-wait-before-clear", "external_ids:ovn-bridge-mappings")
		if err != nil || got != "\"1000\"\n\"physnet:br-phys\"\n" {
			t.Errorf("%s external_ids: %q %v", n.Name, got, err)
		}
		if on, err := netns.Named(n.Netns).TxChecksum(n.UplinkIf); on || err != nil {
			t.Errorf("%s uplink TX checksum offload on %v (err %v), want off", n.Name, on, err)
		}
	}
	if _, ok := tb.Host("backup"); !ok {
		t.Fatal("no backup host")
	}
	t.Run("veth ends have unique ifindexes", func(t *testing.T) { checkIfindexes(t, tb) })
	t.Run("guest NIC keeps its neighbour cache across a re-plug", func(t *testing.T) { checkNeighbourKept(t, tb) })
	t.Run("every daemon restarts back to back in both modes", func(t *testing.T) { checkRestartAll(t, tb) })
	t.Run("a crashed ovn-controller is restarted and reported", func(t *testing.T) { checkCrashRestart(t, tb) })
}

// checkCrashRestart aborts a node's ovn-controller as a failed assertion
// does: its monitor starts a new one, the chassis comes back, and
// Crashes names the crash.
func checkCrashRestart(t *testing.T, tb *Testbed) {
	ctx := context.Background()
	if c, err := tb.Crashes(); err != nil || len(c) != 0 {
		t.Fatalf("before the crash: Crashes() = %v, %v; want none", c, err)
	}
	node := tb.Nodes()[0].Name
	before, err := tb.DaemonPid(node, DaemonOVNController)
	if err != nil {
		t.Fatal(err)
	}
	if err := syscall.Kill(before, syscall.SIGABRT); err != nil {
		t.Fatal(err)
	}
	err = poll.Until(ctx, 20*time.Second, 10*time.Millisecond, "ovn-controller restarted by its monitor", func(context.Context) (bool, error) {
		after, err := tb.DaemonPid(node, DaemonOVNController)
		if err != nil || after == before || !alive(after) {
			return false, poll.Retry("pid %d (%v)", after, err)
		}
		return true, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := tb.WaitChassis(ctx); err != nil {
		t.Fatal(err)
	}
	crashes, err := tb.Crashes()
	want := node + "-" + DaemonOVNController + ".log"
	if err != nil || len(crashes) != 1 || crashes[0].Log != want || !strings.Contains(crashes[0].Line, "crashes: pid "+strconv.Itoa(before)+" died") {
		t.Fatalf("Crashes() = %v, %v; want the monitor's restart line in %s", crashes, err, want)
	}
}

func ifindex(t *testing.T, tb *Testbed, ns, ifname string) string {
	t.Helper()
	attrs, err := netns.Named(ns).LinkAttrs(ifname)
	if err != nil {
		t.Fatal(err)
	}
	return strconv.Itoa(attrs.Index)
}

func checkIfindexes(t *testing.T, tb *Testbed) {
	seen := map[string]string{}
	for _, n := range tb.Nodes() {
		fns, fif, _ := tb.UplinkCapturePoint(n.Name)
		for _, end := range [][2]string{{n.Netns, n.UplinkIf}, {fns, fif}} {
			idx := ifindex(t, tb, end[0], end[1])
			if other, dup := seen[idx]; dup {
				t.Errorf("ifindex %s of %s is also %s's", idx, end[1], other)
			}
			seen[idx] = end[1]
		}
	}
}

func checkNeighbourKept(t *testing.T, tb *Testbed) {
	ctx := context.Background()
	g, err := tb.AddGuest(ctx, "nb")
	if err != nil {
		t.Fatal(err)
	}
	plug := GuestPlug{Guest: "nb", Node: "node1", IfaceID: "nb-port", MAC: "02:00:00:00:09:01"}
	if err := tb.PlugGuest(ctx, plug); err != nil {
		t.Fatal(err)
	}
	c, err := netns.Named(g).Dial()
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	peer, peerMAC := netip.MustParseAddr("10.20.0.10"), net.HardwareAddr{2, 0, 0, 0, 9, 0x99}
	if err := c.SetNeigh(GuestBridge, peer, peerMAC, netns.Reachable); err != nil {
		t.Fatal(err)
	}
	if err := tb.UnplugGuest(ctx, "nb", "node1", ""); err != nil {
		t.Fatal(err)
	}
	carrier, cerr := c.Carrier(GuestBridge)
	mac, nerr := c.Neigh(GuestBridge, peer)
	if carrier || cerr != nil || nerr != nil || mac.String() != peerMAC.String() {
		t.Fatalf("after unplug: carrier %v (%v), neighbour %v (%v): want no carrier and the entry kept", carrier, cerr, mac, nerr)
	}
	plug.Node, plug.Standby = "node2", true
	if err := tb.PlugGuest(ctx, plug); err != nil {
		t.Fatal(err)
	}
	if err := tb.ActivatePlug(ctx, "nb", "node2", ""); err != nil {
		t.Fatal(err)
	}
	if got := tb.GuestNodes("nb"); len(got) != 1 || got[0] != "node2" {
		t.Fatalf("guest plugged into %v, want [node2]", got)
	}
	if err := tb.RemoveGuest(ctx, "nb"); err != nil {
		t.Fatal(err)
	}
}

// TestDownAfterCrash removes a run whose state.json is gone, with a link
// left in the root namespace and a stray process, as a crash leaves them.
func TestDownAfterCrash(t *testing.T) {
	requireTools(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	lockRun(t, "t3")
	if err := Down(ctx, "t3"); err != nil {
		t.Fatalf("removing an earlier run t3: %v", err)
	}
	_, err := Up(ctx, Spec{RunID: "t3", Nodes: 1, Hosts: []HostSpec{}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := Down(context.Background(), "t3"); err != nil {
			t.Errorf("cleanup: %v", err)
		}
	})
	if err := netns.AddVeth(netns.VethEnd{Name: "nqt3v99"}, netns.VethEnd{Name: "nqt3g99"}); err != nil {
		t.Fatal(err)
	}
	stray := exec.Command("tail", "-f", statePath("t3"))
	if err := stray.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { _ = stray.Wait() }()
	if err := os.Remove(statePath("t3")); err != nil {
		t.Fatal(err)
	}
	before, err := Leftovers(ctx, "t3")
	if err != nil || len(before) < 4 {
		t.Fatalf("before Down: %v (%v)", before, err)
	}
	if err := Down(ctx, "t3"); err != nil {
		t.Fatal(err)
	}
	if left, err := Leftovers(ctx, "t3"); err != nil || len(left) > 0 {
		t.Fatalf("after Down: %v (%v)", left, err)
	}
	if alive(stray.Process.Pid) {
		t.Fatalf("stray process %d survived", stray.Process.Pid)
	}
}
