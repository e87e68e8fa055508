package kubevirt

import (
	"context"
	"encoding/json"
	"fmt"
	"net/netip"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	nadv1 "github.com/nqos/nqos/api/nad/v1"
	"github.com/nqos/nqos/capture"
	"github.com/nqos/nqos/capture/live"
	"github.com/nqos/nqos/internal/poll"
	"github.com/nqos/nqos/topo/localnet"
)

func testVM(name, node, mac, ip string, labels map[string]string) VM {
	return VM{Name: name, Namespace: "vms", Labels: labels, Node: node,
		Interfaces: []Interface{{NAD: "tenant-blue", MAC: mac, IPv4: ip}}}
}

const (
	qosPG   = "nqtestpg"
	qosDSCP = 46
	rateKb  = 100000
)

// TestVMsOnLocalnet boots two nodes, runs a VM on each and proves the
// datapath, QoS marking and policing, live migration in both modes, a
// launcher restart, a guest IP change and daemon restarts.
func TestVMsOnLocalnet(t *testing.T) {
	tb, kube := bootTestbed(t, localnet.Spec{RunID: "t2"})
	ctx := context.Background()
	m := NewManager(tb, kube)
	vm1 := testVM("vm1", "node1", "02:00:00:00:01:01", "10.20.1.1/16", map[string]string{"tier": "production"})
	vm2 := testVM("vm2", "node2", "02:00:00:00:01:02", "10.20.1.2/16", map[string]string{"tier": "staging"})
	for _, vm := range []VM{vm1, vm2} {
		if err := m.Create(ctx, vm, CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	backup, _ := tb.Host("backup")
	g1, g2 := m.Guest(vm1), m.Guest(vm2)
	e1, e2, eb := endpoint{g1, "10.20.1.1"}, endpoint{g2, "10.20.1.2"}, endpoint{backup.Netns, backup.IPv4}

	t.Run("launcher pod and LSP follow ovnkube conventions", func(t *testing.T) {
		checkLauncher(t, m, tb, vm1)
	})
	t.Run("VM to VM across nodes", func(t *testing.T) {
		reach(t, e1, e2, 20)
		reach(t, e2, e1, 20)
	})
	t.Run("VM to backup server, UDP both ways and TCP", func(t *testing.T) {
		reach(t, e1, eb, 20)
		reach(t, eb, e1, 20)
		r, err := iperf(ctx, tb, g2, "-c", backup.IPv4, "-p", "5201", "-t", "1")
		if err != nil {
			t.Fatal(err)
		}
		if r.End.SumReceived.BitsPerSecond < 10e6 {
			t.Fatalf("TCP vm2 -> backup: %.1f Mbit/s, want >= 10", r.End.SumReceived.BitsPerSecond/1e6)
		}
		t.Logf("TCP vm2 -> backup unpoliced: %.1f Mbit/s", r.End.SumReceived.BitsPerSecond/1e6)
	})
	t.Run("hand-made QoS row marks DSCP and polices", func(t *testing.T) {
		addQoSRow(t, tb, m, vm1)
		checkMarking(t, tb, e1, e2, eb)
		checkPolicing(t, tb, g1, backup.IPv4)
	})
	for _, mig := range []struct {
		mode   MigrationMode
		target string
		late   bool
	}{{MigratePerPodLSP, "node2", false}, {MigrateMultiChassis, "node1", false}, {MigratePerPodLSP, "node2", true}} {
		t.Run("live migration "+string(mig.mode)+map[bool]string{true: " late target LSP"}[mig.late], func(t *testing.T) {
			migrateAndMeasure(t, tb, m, vm1, mig.target, mig.mode, mig.late)
		})
	}
	t.Run("launcher restart", func(t *testing.T) {
		before, _ := m.Get("vms", "vm2")
		if err := m.RestartLauncher(ctx, "vms", "vm2"); err != nil {
			t.Fatal(err)
		}
		after, _ := m.Get("vms", "vm2")
		if after.Pod == before.Pod || after.LSPs[0] == before.LSPs[0] {
			t.Fatalf("restart kept pod %s / LSP %s", after.Pod, after.LSPs[0])
		}
		reachEventually(t, e2, eb)
		reach(t, e2, eb, 20)
	})
	t.Run("guest IP change unseen by OVN", func(t *testing.T) {
		if err := m.SetGuestIP(ctx, "vms", "vm2", 0, "10.20.1.22/16", ""); err != nil {
			t.Fatal(err)
		}
		got, err := guestAddrs(g2, "eth0")
		if want := []netip.Prefix{netip.MustParsePrefix("10.20.1.22/16")}; err != nil || !slices.Equal(got, want) {
			t.Fatalf("guest addresses after change: %v (%v), want %v", got, err, want)
		}
		e2new := endpoint{g2, "10.20.1.22"}
		reachEventually(t, e2new, eb)
		reach(t, e2new, eb, 20)
		reach(t, eb, e2new, 20)
	})
	t.Run("daemon restarts", func(t *testing.T) {
		restartDaemons(t, tb, e1, eb)
	})
	t.Run("LSP created after the guest is plugged", func(t *testing.T) {
		vm3 := testVM("vm3", "node2", "02:00:00:00:01:03", "10.20.1.3/16", nil)
		if err := m.Create(ctx, vm3, CreateOptions{SkipLSP: true}); err != nil {
			t.Fatal(err)
		}
		in, _ := m.Get("vms", "vm3")
		if out, err := tb.NBCtl(ctx, "--bare", "--columns=name", "find", "Logical_Switch_Port", "name="+in.LSPs[0]); err != nil || out != "" {
			t.Fatalf("LSP exists before CreateLSPs: %q %v", out, err)
		}
		if err := m.CreateLSPs(ctx, "vms", "vm3"); err != nil {
			t.Fatal(err)
		}
		reach(t, endpoint{m.Guest(vm3), "10.20.1.3"}, eb, 20)
	})
	t.Run("delete VM", func(t *testing.T) {
		if err := m.Delete(ctx, "vms", "vm2"); err != nil {
			t.Fatal(err)
		}
		out, err := tb.NBCtl(ctx, "--bare", "--columns=name", "find", "Logical_Switch_Port", "external_ids:namespace=vms")
		if err != nil || strings.Contains(out, "vm2") {
			t.Fatalf("LSPs after delete: %q %v", out, err)
		}
	})
}

// checkLauncher checks the pod object and the LSP of a VM.
func checkLauncher(t *testing.T, m *Manager, tb *localnet.Testbed, vm VM) {
	ctx := context.Background()
	in, err := m.Get(vm.Namespace, vm.Name)
	if err != nil {
		t.Fatal(err)
	}
	wantLSP := "vms.tenant.blue_vms_" + in.Pod
	if in.LSPs[0] != wantLSP || !strings.HasPrefix(in.Pod, "virt-launcher-vm1-") || len(in.Pod) != len("virt-launcher-vm1-")+5 {
		t.Fatalf("pod %q LSP %q, want virt-launcher-vm1-xxxxx and %q", in.Pod, in.LSPs[0], wantLSP)
	}
	out, err := tb.NBCtl(ctx, "--format=json", "--columns=addresses,port_security,options,external_ids", "find", "Logical_Switch_Port", "name="+wantLSP)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"02:00:00:00:01:01"`, `"requested-chassis","node1"`, `"k8s.ovn.org/nad","vms/tenant-blue"`,
		`"k8s.ovn.org/network","tenant-blue"`, `"k8s.ovn.org/topology","localnet"`, `"namespace","vms"`, `"pod","true"`} {
		if !strings.Contains(out, want) {
			t.Errorf("LSP %s lacks %s: %s", wantLSP, want, out)
		}
	}
	if strings.Contains(out, "10.20.1.1") {
		t.Errorf("LSP on an ipamless network carries an IP: %s", out)
	}
	if m.kube == nil {
		return
	}
	pod, err := m.kube.CoreV1().Pods(vm.Namespace).Get(ctx, in.Pod, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if pod.Spec.NodeName != "node1" || pod.Labels["tier"] != "production" || pod.Labels[LabelKubeVirt] != LauncherLabelValue || pod.Labels[LabelVMName] != "vm1" {
		t.Errorf("pod %s: nodeName %q labels %v", pod.Name, pod.Spec.NodeName, pod.Labels)
	}
	var multus []multusEntry
	if err := json.Unmarshal([]byte(pod.Annotations[nadv1.NetworksAnnotation]), &multus); err != nil || len(multus) != 1 ||
		multus[0].Name != "tenant-blue" || multus[0].Namespace != "vms" || multus[0].MAC != "02:00:00:00:01:01" {
		t.Errorf("networks annotation %q (%v)", pod.Annotations[nadv1.NetworksAnnotation], err)
	}
	var pn map[string]podNetwork
	if err := json.Unmarshal([]byte(pod.Annotations[PodNetworksAnnotation]), &pn); err != nil ||
		pn["vms/tenant-blue"].MACAddress != "02:00:00:00:01:01" || len(pn["vms/tenant-blue"].IPAddresses) != 0 {
		t.Errorf("pod-networks annotation %q (%v)", pod.Annotations[PodNetworksAnnotation], err)
	}
}

// addQoSRow puts vm's LSP in a port group and binds a hand-made QoS row
// (DSCP 46, 100 Mbit/s) matching it to the localnet switch.
func addQoSRow(t *testing.T, tb *localnet.Testbed, m *Manager, vm VM) {
	ctx := context.Background()
	in, _ := m.Get(vm.Namespace, vm.Name)
	sw := tb.Networks()[0].Switch
	if _, err := tb.NBCtl(ctx, "pg-add", qosPG, in.LSPs[0]); err != nil {
		t.Fatal(err)
	}
	if _, err := tb.NBCtl(ctx, "qos-add", sw, "to-lport", "10600", "inport == @"+qosPG+" && (ip4 || ip6)", "dscp=46", "rate=100000", "burst=5000"); err != nil {
		t.Fatal(err)
	}
	if err := tb.WaitHVSync(ctx); err != nil {
		t.Fatal(err)
	}
}

// checkMarking sends datagrams to the backup server from both guests
// while watching both uplinks: every packet of the QoS VM is DSCP 46 on
// VLAN 100, every one of the other VM unmarked.
func checkMarking(t *testing.T, tb *localnet.Testbed, marked, unmarked, dst endpoint) {
	watches := []*live.Watch{watchUplink(t, tb, "node1"), watchUplink(t, tb, "node2")}
	// Closed on return: decoding every packet of the policing flood would
	// take CPU from the datapaths under test.
	defer func() {
		for _, w := range watches {
			w.Close()
		}
	}()
	reach(t, marked, dst, 20)
	reach(t, unmarked, dst, 20)
	dstAddr := netip.MustParseAddr(dst.ip)
	for i, src := range []endpoint{marked, unmarked} {
		want := []int{qosDSCP, 0}[i]
		for _, s := range seenTo(t, watches[i], netip.MustParseAddr(src.ip), dstAddr, 20) {
			if s.DSCP != want || s.VLAN != 100 {
				t.Errorf("packet %s -> %s on node%d uplink: DSCP %d VLAN %d, want DSCP %d VLAN 100", src.ip, s.Dst, i+1, s.DSCP, s.VLAN, want)
			}
		}
	}
}

// seenTo polls until w has seen at least n packets from src to dst (the
// capture goroutine can lag behind the receiver on a loaded machine) and
// returns them all.
func seenTo(t *testing.T, w *live.Watch, src, dst netip.Addr, n int) []capture.Packet {
	t.Helper()
	var got []capture.Packet
	err := poll.Until(context.Background(), 10*time.Second, 10*time.Millisecond, "captured packets", func(context.Context) (bool, error) {
		got = got[:0]
		for _, s := range w.Packets(src) {
			if s.Dst == dst {
				got = append(got, s)
			}
		}
		return len(got) >= n, nil
	})
	if err != nil {
		t.Fatalf("%s -> %s: %v: %d packets seen on the uplink, want >= %d", src, dst, err, len(got), n)
	}
	return got
}

// checkPolicing offers 200 Mbit/s of UDP against the 100 Mbit/s row. The
// meter's own counters must show [0.85, 1.05] x rate passed, and the
// receiver must get [0.75, 1.05] x rate: its path crosses two more
// userspace datapaths (node egress, fabric) that drop under CPU
// starvation after the policer did its job (measured on a 2-core machine
// at load 13: 79-86 Mbit/s received with the meter passing 88-95). More
// than an upper bound is a policer bug and fails at once. On this shared 2-core machine a
// CPU-starved userspace datapath can fall short without any bug: less
// than 1.25 x rate reaching the meter (then an unpoliced flow would not
// stand out above the upper bound), a meter passing less than the
// lower bound (its bucket, 5 Mbit deep, overflows while the datapath is
// descheduled for more than 50 ms) or loss after the meter. Such an
// attempt is repeated; the verdict of the last of 4 attempts stands.
func checkPolicing(t *testing.T, tb *localnet.Testbed, guest, dst string) {
	const attempts = 4
	for attempt := 1; ; attempt++ {
		r := policeOnce(t, tb, guest, dst)
		t.Logf("attempt %d: UDP offered %.1f Mbit/s, at the meter %.1f, meter passed %.1f (frames), receiver got %.1f (payload); row rate %d kbit/s",
			attempt, r.offered, r.meterIn, r.passed, r.received, rateKb)
		verdict, retry := r.verdict()
		switch {
		case verdict == "":
			return
		case !retry || attempt == attempts:
			t.Fatalf("attempt %d of %d: %s", attempt, attempts, verdict)
		}
		t.Logf("attempt %d: %s: repeating", attempt, verdict)
	}
}

// verdict checks one policing run against the row's rate: "" when it
// passes, else what is wrong and whether CPU starvation can explain it.
func (r policeResult) verdict() (string, bool) {
	lo, hi := 0.85*rateKb/1e3, 1.05*rateKb/1e3 // Mbit/s, meter and receiver
	rxLo := 0.75 * rateKb / 1e3
	switch {
	case r.passed > hi:
		return fmt.Sprintf("meter passed %.1f Mbit/s of %.1f, want within [%.1f, %.1f]", r.passed, r.meterIn, lo, hi), false
	case r.received > hi:
		return fmt.Sprintf("receiver got %.1f Mbit/s, want within [%.1f, %.1f]", r.received, rxLo, hi), false
	case r.meterIn < 1.25*rateKb/1e3:
		return fmt.Sprintf("only %.1f Mbit/s reached the meter: cannot test a %d kbit/s policer", r.meterIn, rateKb), true
	case r.passed < lo:
		return fmt.Sprintf("meter passed %.1f Mbit/s of %.1f, want within [%.1f, %.1f]", r.passed, r.meterIn, lo, hi), true
	case r.received < rxLo:
		return fmt.Sprintf("receiver got %.1f Mbit/s, want within [%.1f, %.1f] (meter passed %.1f: the loss is after the policer)", r.received, rxLo, hi, r.passed), true
	}
	return "", false
}

// policeResult are the rates (Mbit/s) of one policing run.
type policeResult struct{ offered, meterIn, passed, received float64 }

// policeOnce runs one 3 s UDP test.
func policeOnce(t *testing.T, tb *localnet.Testbed, guest, dst string) policeResult {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	in0, drop0 := meterBytes(t, tb, "node1")
	r, err := iperf(ctx, tb, guest, "-c", dst, "-p", "5201", "-u", "-b", "200M", "-l", "1400", "-w", "4M", "-t", "3")
	if err != nil {
		t.Fatal(err)
	}
	in1, drop1 := meterBytes(t, tb, "node1")
	rate := func(bytes int64) float64 { return float64(bytes) * 8 / r.End.SumSent.Seconds / 1e6 }
	return policeResult{offered: r.End.SumSent.BitsPerSecond / 1e6, meterIn: rate(in1 - in0),
		passed: rate((in1 - in0) - (drop1 - drop0)), received: r.End.SumReceived.BitsPerSecond / 1e6}
}

// meterBytes reads the bytes entering node's OVS meters and the bytes
// their bands dropped (`ovs-ofctl meter-stats`).
func meterBytes(t *testing.T, tb *localnet.Testbed, node string) (in, dropped int64) {
	t.Helper()
	n, _ := tb.Node(node)
	out, err := tb.Exec(context.Background(), n.Netns, "ovs-ofctl", "-O", "OpenFlow15", "meter-stats", "unix:"+n.Dir+"/br-int.mgmt")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range strings.Fields(out) {
		k, v, ok := strings.Cut(f, ":")
		if !ok {
			continue
		}
		x, _ := strconv.ParseInt(v, 10, 64)
		switch k {
		case "byte_in_count":
			in += x
		case "byte_count":
			dropped += x
		}
	}
	return in, dropped
}
