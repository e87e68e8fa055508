package localnet

import (
	"context"
	"strings"
	"testing"

	"github.com/nqos/nqos/internal/ovninstall"
)

func TestParseTopology(t *testing.T) {
	for _, ok := range []string{"central", "interconnect"} {
		if got, err := ParseTopology(ok); err != nil || string(got) != ok {
			t.Errorf("ParseTopology(%q) = %q, %v", ok, got, err)
		}
	}
	for _, bad := range []string{"", "Central", "ic"} {
		if _, err := ParseTopology(bad); err == nil || !strings.Contains(err.Error(), "must be central or interconnect") {
			t.Errorf("ParseTopology(%q) error %v, want the choices named", bad, err)
		}
	}
}

func TestZoneLayouts(t *testing.T) {
	nodes := []string{"node1", "node2", "node3"}
	c := Central.layout().zones("/r", nodes)
	if len(c) != 1 || c[0].Name != GlobalZone || c[0].Owner != "" || c[0].NB != "unix:/r/nb.sock" || c[0].SB != "unix:/r/sb.sock" || len(c[0].Nodes) != 3 {
		t.Fatalf("central zones %+v", c)
	}
	ic := Interconnect.layout().zones("/r", nodes)
	if len(ic) != 3 {
		t.Fatalf("interconnect zones %+v, want 3", ic)
	}
	for i, z := range ic {
		n := nodes[i]
		if z.Name != n || z.Owner != n || !z.Has(n) || len(z.Nodes) != 1 || z.NB != "unix:/r/zone-"+n+"/nb.sock" || z.SB != "unix:/r/zone-"+n+"/sb.sock" {
			t.Errorf("zone %d %+v", i, z)
		}
	}
	nodes[0] = "changed"
	if c[0].Nodes[0] != "node1" {
		t.Error("central zone shares the caller's node slice")
	}
}

func TestSpecTopology(t *testing.T) {
	s, err := Spec{RunID: "zt"}.withDefaults()
	if err != nil || s.Topology != Central {
		t.Fatalf("default topology %q (%v), want central", s.Topology, err)
	}
	if _, err := (Spec{RunID: "zt", Topology: "mesh"}).withDefaults(); err == nil || !strings.Contains(err.Error(), "spec.Topology") {
		t.Errorf("bad topology error %v, want one naming spec.Topology", err)
	}
	if _, err := (Spec{RunID: "zt", Topology: Interconnect, Kind: &KindCluster{Name: "k", Nodes: make([]KindNode, 3)}}).withDefaults(); err == nil {
		t.Error("interconnect on a KinD cluster accepted")
	}
}

// TestInterconnectUp boots two zones: each node's chassis is in its own
// zone's SB only, every zone has the network's switch and localnet port,
// a VM port lives in its node's zone and comes up there, and restarting
// a zone's NB restarts that zone's.
func TestInterconnectUp(t *testing.T) {
	ovninstall.ForEach(t, func(t *testing.T, _ ovninstall.Install) { testInterconnectUp(t) })
}

func testInterconnectUp(t *testing.T) {
	tb := startTestbed(t, Spec{RunID: "t3", Topology: Interconnect})
	ctx := context.Background()
	zs := tb.Zones()
	if len(zs) != 2 {
		t.Fatalf("zones %+v, want 2", zs)
	}
	st, err := RunStatus(ctx, "t3")
	if err != nil || !st.Healthy() || len(st.Daemons) != 18 || st.Topology != Interconnect || len(st.Zones) != 2 {
		t.Fatalf("status healthy %v daemons %d topology %q zones %d (%v)", st.Healthy(), len(st.Daemons), st.Topology, len(st.Zones), err)
	}
	if _, err := tb.NBCtl(ctx, "show"); err == nil {
		t.Error("NBCtl without a node succeeded on interconnect, want an error naming the need for a node")
	}
	for _, z := range zs {
		out, err := tb.ZoneSBCtl(ctx, z, "--bare", "--columns=name", "list", "Chassis")
		if err != nil || strings.TrimSpace(out) != z.Name {
			t.Errorf("zone %s chassis %q (%v), want only %s", z.Name, out, err, z.Name)
		}
		out, err = tb.ZoneNBCtl(ctx, z, "--bare", "--columns=name", "find", "Logical_Switch_Port", "type=localnet")
		if err != nil || strings.TrimSpace(out) != "tenant.blue_ovn_localnet_port" {
			t.Errorf("zone %s localnet ports %q (%v)", z.Name, out, err)
		}
	}
	n2 := tb.Nodes()[1].Name
	if _, err := tb.AddGuest(ctx, "g1"); err != nil {
		t.Fatal(err)
	}
	if err := tb.PlugGuest(ctx, GuestPlug{Guest: "g1", Node: n2, IfaceID: "lsp-g1", MAC: "0a:58:0a:00:00:01"}); err != nil {
		t.Fatal(err)
	}
	sw := tb.Networks()[0].Switch
	if _, err := tb.NodeNBCtl(ctx, n2, "lsp-add", sw, "lsp-g1", "--", "lsp-set-addresses", "lsp-g1", "0a:58:0a:00:00:01"); err != nil {
		t.Fatal(err)
	}
	if err := tb.WaitPortUp(ctx, "lsp-g1"); err != nil {
		t.Fatal(err)
	}
	if z, err := tb.ZoneOfPort(ctx, "lsp-g1"); err != nil || z.Name != n2 {
		t.Errorf("zone of lsp-g1 %q (%v), want %s", z.Name, err, n2)
	}
	before, err := tb.DaemonPid(n2, DaemonNB)
	if err != nil {
		t.Fatal(err)
	}
	if err := tb.RestartDaemon(ctx, n2, DaemonNB, RestartKill); err != nil {
		t.Fatal(err)
	}
	after, err := tb.DaemonPid(n2, DaemonNB)
	if err != nil || after == before {
		t.Errorf("zone %s NB pid %d -> %d (%v), want a new process", n2, before, after, err)
	}
	if err := tb.WaitHVSync(ctx); err != nil {
		t.Fatal(err)
	}
}
