package cni

import (
	"context"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/containernetworking/cni/pkg/skel"
	types100 "github.com/containernetworking/cni/pkg/types/100"
	"github.com/google/go-cmp/cmp"

	"github.com/nqos/nqos/internal/netns"
	"github.com/nqos/nqos/internal/poll"
	"github.com/nqos/nqos/internal/qos"
)

// TestPlugin runs ADD, CHECK and DEL against a real kube-apiserver (as the
// ServiceAccount nqos-kind up installs) and a real OVS on the netdev
// datapath.
func TestPlugin(t *testing.T) {
	w := newWorld(t)
	w.createNAD("vms", "blue", `{"cniVersion":"1.0.0","type":"ovn-k8s-cni-overlay","topology":"localnet","name":"tenant-blue","netAttachDefName":"vms/blue","mtu":1400,"physicalNetworkName":"physnet","vlanID":100}`)
	w.createNAD("net", "red", `{"cniVersion":"1.0.0","type":"ovn-k8s-cni-overlay","topology":"localnet","name":"tenant-red","netAttachDefName":"net/red"}`)
	w.createNAD("vms", "l2", `{"cniVersion":"1.0.0","type":"ovn-k8s-cni-overlay","topology":"layer2","name":"l2","netAttachDefName":"vms/l2"}`)

	t.Run("add check del", func(t *testing.T) { testAddCheckDel(t, w) })
	t.Run("no annotation passes through", func(t *testing.T) { testPassThrough(t, w) })
	t.Run("bad NAD leaves nothing", func(t *testing.T) { testBadNAD(t, w) })
	t.Run("failed plug undoes the ports before", func(t *testing.T) { testUndo(t, w) })
	t.Run("del after the netns is gone", func(t *testing.T) { testDelGoneNetns(t, w) })
}

func testAddCheckDel(t *testing.T, w *world) {
	podNS := w.bed.Netns("pod-a")
	uid := w.createPod("launcher-a", `[{"name":"blue","namespace":"vms","mac":"02:00:00:00:0a:01","interface":"pod1"},{"name":"red","namespace":"net"}]`)
	args := w.args("sandbox-a", podNS, "launcher-a", uid)
	res := w.add(t, args)
	var names []string
	for _, i := range res.Interfaces {
		names = append(names, i.Name)
	}
	want := []string{"eth0", HostIfName("sandbox-a", "pod1"), "pod1", HostIfName("sandbox-a", "net2"), "net2"}
	if strings.Join(names, " ") != strings.Join(want, " ") || len(res.IPs) != 1 || res.IPs[0].Address.String() != "10.244.1.5/24" {
		t.Fatalf("result interfaces %v IPs %v: want %v and the bridge's IP passed through", names, res.IPs, want)
	}
	if res.Interfaces[2].Mac != "02:00:00:00:0a:01" || res.Interfaces[2].Sandbox != args.Netns || res.Interfaces[2].Mtu != 1400 {
		t.Errorf("pod1 in the result: %+v", res.Interfaces[2])
	}

	wantPod := map[string]struct {
		mac string
		mtu int
	}{"pod1": {"02:00:00:00:0a:01", 1400}, "net2": {GeneratedMAC("sandbox-a", "net2").String(), 1500}}
	for ifname, wp := range wantPod {
		err := netns.Named(podNS).WithConn(func(c *netns.Conn) error {
			l, err := c.Link(ifname)
			if err != nil {
				return err
			}
			a := l.Attrs()
			if a.HardwareAddr.String() != wp.mac || a.MTU != wp.mtu || a.Flags&net.FlagUp == 0 {
				return fmt.Errorf("link %s: MAC %s MTU %d flags %v, want %s %d up", ifname, a.HardwareAddr, a.MTU, a.Flags, wp.mac, wp.mtu)
			}
			addrs, err := c.Addrs(ifname)
			if err != nil {
				return err
			}
			for _, p := range addrs {
				if p.Addr().Is4() || !p.Addr().IsLinkLocalUnicast() {
					return fmt.Errorf("link %s has address %s: want no IP", ifname, p)
				}
			}
			return nil
		})
		if err != nil {
			t.Error(err)
		}
	}

	host := HostIfName("sandbox-a", "pod1")
	st, err := ovs{vsctl: DefaultVsctl, db: w.ovs.DB}.port(w.ctx, host)
	if err != nil {
		t.Fatal(err)
	}
	wantIDs := map[string]string{
		"iface-id": qos.LogicalPortName("vms", "blue", "vms", "launcher-a"), "attached-mac": "02:00:00:00:0a:01", "iface-status": "active",
		"nqos-cni/netns": args.Netns, "nqos-cni/ifname": "pod1", "nqos-cni/pod": "vms/launcher-a", "nqos-cni/sandbox": "sandbox-a",
		"iface-id-ver": uid,
	}
	if diff := cmp.Diff(wantIDs, st.ids); diff != "" || st.bridge != DefaultBridge || st.ofport == "[]" {
		t.Errorf("port %s: bridge %s ofport %s, external_ids (-want +got):\n%s", host, st.bridge, st.ofport, diff)
	}
	if got := w.sandboxPorts("sandbox-a"); len(got) != 2 {
		t.Errorf("OVS ports of sandbox-a: %v, want 2", got)
	}

	if err := w.plugin.Check(w.ctx, args); err != nil {
		t.Errorf("CHECK after ADD: %v", err)
	}
	// CHECK must notice a port OVS no longer has.
	w.ovs.Vsctl("del-port", host)
	if err := w.plugin.Check(w.ctx, args); err == nil || !strings.Contains(err.Error(), host) {
		t.Errorf("CHECK without port %s: error %v, want one naming it", host, err)
	}

	for i := range 2 {
		if err := w.plugin.Del(w.ctx, args); err != nil {
			t.Fatalf("DEL #%d: %v", i+1, err)
		}
	}
	if got := w.sandboxPorts("sandbox-a"); len(got) != 0 {
		t.Errorf("OVS ports of sandbox-a after DEL: %v", got)
	}
	// The pod1 veth lost its OVS port above, so only DEL's scan by OVS
	// row removes net2; pod1's veth is removed with the links check below.
	deleteLink(t, w.node, host)
	assertLinks(t, podNS, "lo")
	assertNoLink(t, w.node, HostIfName("sandbox-a", "net2"))
}

func testPassThrough(t *testing.T, w *world) {
	podNS := w.bed.Netns("pod-b")
	uid := w.createPod("plain", "")
	args := w.args("sandbox-b", podNS, "plain", uid)
	res := w.add(t, args)
	if len(res.Interfaces) != 1 || res.Interfaces[0].Name != "eth0" || len(res.IPs) != 1 {
		t.Errorf("result %+v: want the prevResult unchanged", res)
	}
	if err := w.plugin.Check(w.ctx, args); err != nil {
		t.Error(err)
	}
	if err := w.plugin.Del(w.ctx, args); err != nil {
		t.Error(err)
	}
	assertLinks(t, podNS, "lo")
}

func testBadNAD(t *testing.T, w *world) {
	podNS := w.bed.Netns("pod-c")
	uid := w.createPod("bad", "blue@pod1, l2@pod2")
	_, err := w.plugin.Add(w.ctx, w.args("sandbox-c", podNS, "bad", uid))
	want := `pod vms/bad: k8s.v1.cni.cncf.io/networks entry 2 (vms/l2): NAD vms/l2: spec.config.topology: "layer2": want localnet`
	if err == nil || err.Error() != want {
		t.Fatalf("ADD error = %v\nwant %s", err, want)
	}
	assertLinks(t, podNS, "lo")
	if got := w.sandboxPorts("sandbox-c"); len(got) != 0 {
		t.Errorf("OVS ports of sandbox-c after a failed ADD: %v", got)
	}
}

func testUndo(t *testing.T, w *world) {
	podNS := w.bed.Netns("pod-d")
	uid := w.createPod("clash", "blue@pod1, net/red@pod2")
	// A link already named pod2 in the sandbox makes the second veth fail.
	if err := netns.Named(podNS).WithConn(func(c *netns.Conn) error { return c.AddBridge(netns.Bridge{Name: "pod2"}) }); err != nil {
		t.Fatal(err)
	}
	_, err := w.plugin.Add(w.ctx, w.args("sandbox-d", podNS, "clash", uid))
	if err == nil || !strings.Contains(err.Error(), "pod vms/clash: interface pod2 (NAD net/red)") {
		t.Fatalf("ADD error = %v, want one naming pod vms/clash, interface pod2 and NAD net/red", err)
	}
	assertLinks(t, podNS, "lo", "pod2")
	if got := w.sandboxPorts("sandbox-d"); len(got) != 0 {
		t.Errorf("OVS ports of sandbox-d after a failed ADD: %v", got)
	}
	assertNoLink(t, w.node, HostIfName("sandbox-d", "pod1"))
}

func testDelGoneNetns(t *testing.T, w *world) {
	// This namespace is deleted by the test itself, so not through bed.
	podNS := w.bed.Name("pod-e")
	if _, err := netns.Create(podNS); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if ok, _ := netns.Named(podNS).Exists(); ok {
			_ = netns.Named(podNS).Delete()
		}
	})
	uid := w.createPod("gone", "blue")
	args := w.args("sandbox-e", podNS, "gone", uid)
	w.add(t, args)
	if err := netns.Named(podNS).Delete(); err != nil {
		t.Fatal(err)
	}
	if err := w.plugin.Del(w.ctx, args); err != nil {
		t.Fatalf("DEL after the netns is gone: %v", err)
	}
	if got := w.sandboxPorts("sandbox-e"); len(got) != 0 {
		t.Errorf("OVS ports of sandbox-e after DEL: %v", got)
	}
	assertNoLink(t, w.node, HostIfName("sandbox-e", "net1"))
}

// add runs ADD, which must succeed, and returns its result.
func (w *world) add(t *testing.T, args *skel.CmdArgs) *types100.Result {
	t.Helper()
	r, err := w.plugin.Add(w.ctx, args)
	if err != nil {
		t.Fatal(err)
	}
	res, err := types100.GetResult(r)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// deleteLink removes a link from ns.
func deleteLink(t *testing.T, ns, name string) {
	t.Helper()
	err := netns.Named(ns).WithConn(func(c *netns.Conn) error { return c.Delete(name) })
	if err != nil {
		t.Fatal(err)
	}
}

// assertLinks fails unless ns has exactly the named links; a link being
// torn down by the kernel is waited for.
func assertLinks(t *testing.T, ns string, want ...string) {
	t.Helper()
	err := poll.Until(context.Background(), 5*time.Second, 20*time.Millisecond, "links of "+ns+" = "+strings.Join(want, ","), func(context.Context) (bool, error) {
		var got []string
		err := netns.Named(ns).WithConn(func(c *netns.Conn) error {
			var err error
			got, err = c.Names()
			return err
		})
		if err != nil {
			return false, err
		}
		if strings.Join(got, ",") != strings.Join(want, ",") {
			return false, poll.Retry("links %v", got)
		}
		return true, nil
	})
	if err != nil {
		t.Error(err)
	}
}

// assertNoLink fails while ns has a link name (waiting for the kernel to
// finish removing a namespace's veths).
func assertNoLink(t *testing.T, ns, name string) {
	t.Helper()
	err := poll.Until(context.Background(), 5*time.Second, 20*time.Millisecond, "no link "+name+" in "+ns, func(context.Context) (bool, error) {
		var ok bool
		err := netns.Named(ns).WithConn(func(c *netns.Conn) error {
			var err error
			ok, err = c.Exists(name)
			return err
		})
		if err != nil {
			return false, err
		}
		if ok {
			return false, poll.Retry("%s exists", name)
		}
		return true, nil
	})
	if err != nil {
		t.Error(err)
	}
}
