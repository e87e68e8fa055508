package localnet

import (
	"encoding/json"
	"errors"
	"slices"
	"testing"
)

func TestParseKindNode(t *testing.T) {
	for _, tc := range []struct {
		line string
		want KindNode
		ok   bool
	}{
		{"/nqos-e2e-control-plane 4242 control-plane 172.31.254.2 ", KindNode{Name: "nqos-e2e-control-plane", PID: 4242, Role: "control-plane", InternalIP: "172.31.254.2"}, true},
		{"/nqos-e2e-worker 77 worker 172.31.254.3", KindNode{Name: "nqos-e2e-worker", PID: 77, Role: "worker", InternalIP: "172.31.254.3"}, true},
		{"/nqos-e2e-worker 0 worker 172.31.254.3", KindNode{}, false}, // stopped container
		{"/nqos-e2e-worker 77 worker", KindNode{}, false},             // no address
		{"/nqos-e2e-worker 77 worker 10.0.0.1 10.0.0.2", KindNode{}, false},
	} {
		got, err := parseKindNode(tc.line)
		if (err == nil) != tc.ok || got != tc.want {
			t.Errorf("parseKindNode(%q) = %+v, %v; want %+v, ok %v", tc.line, got, err, tc.want, tc.ok)
		}
	}
}

func TestKindAddresses(t *testing.T) {
	k := KindCluster{Name: "nqos-e2e", Nodes: []KindNode{{Name: "cp", InternalIP: "172.31.254.2"}, {Name: "w", InternalIP: "172.31.254.3"}}}
	if k.NB() != "tcp:172.31.254.2:6641" || k.SB() != "tcp:172.31.254.2:6642" {
		t.Errorf("NB %s SB %s: want the control plane's 6641 and 6642", k.NB(), k.SB())
	}
	if (KindCluster{}).NB() != "" {
		t.Error("a cluster without nodes has an NB address")
	}
	s := Spec{RunID: "k1", Nodes: 3, Kind: &k}
	if _, err := s.withDefaults(); !errors.Is(err, ErrNotSupported) {
		t.Errorf("3 nodes on a 2-node cluster: %v, want ErrNotSupported", err)
	}
	s.Nodes = 2
	if _, err := s.withDefaults(); err != nil {
		t.Errorf("2 nodes on a 2-node cluster: %v", err)
	}
}

func TestGuestNICNames(t *testing.T) {
	embedded := &Testbed{st: &state{Spec: Spec{}}}
	kind := &Testbed{st: &state{RunID: "k1", Spec: Spec{Kind: &KindCluster{}}}}
	if embedded.GuestNIC(0) != "eth0" || embedded.GuestNIC(1) != "eth1" || embedded.LauncherImage() != "" {
		t.Errorf("embedded: %s %s %q", embedded.GuestNIC(0), embedded.GuestNIC(1), embedded.LauncherImage())
	}
	if kind.GuestNIC(0) != "pod1" || kind.GuestNIC(1) != "pod2" || kind.LauncherImage() != kindLauncherImage {
		t.Errorf("kind: %s %s %q", kind.GuestNIC(0), kind.GuestNIC(1), kind.LauncherImage())
	}
	if g := kind.GuestNetns("vms-a"); g != "nqosk-k1-vm-vms-a" {
		t.Errorf("kind guest netns %s: want one Down never ends processes in", g)
	}
}

func TestOVSMap(t *testing.T) {
	raw := json.RawMessage(`["map",[["iface-id","vms.tenant-blue_vms_virt-launcher-a-x1"],["nqos-cni/netns","/var/run/netns/cni-1"]]]`)
	m, err := ovsMap(raw)
	if err != nil || m["iface-id"] != "vms.tenant-blue_vms_virt-launcher-a-x1" || m["nqos-cni/netns"] != "/var/run/netns/cni-1" {
		t.Errorf("ovsMap = %v, %v", m, err)
	}
	if _, err := ovsMap(json.RawMessage(`"x"`)); err == nil {
		t.Error("a non-map decoded")
	}
}

func TestInContainer(t *testing.T) {
	for in, want := range map[string]string{
		"/var/run/netns/cni-1": "/run/netns/cni-1",
		"/run/netns/cni-1":     "/run/netns/cni-1",
		"/var/lib/x":           "/var/lib/x",
	} {
		if got := inContainer(in); got != want {
			t.Errorf("inContainer(%s) = %s, want %s", in, got, want)
		}
	}
}

// TestKindZones: an interconnect cluster is a zone per cluster node on
// that node's TCP NB and SB, also for a run on fewer nodes; a central one
// is the control plane's one zone; the spec's topology must match.
func TestKindZones(t *testing.T) {
	k := &KindCluster{Name: "nqos-z", Topology: Interconnect,
		Nodes: []KindNode{{Name: "cp", InternalIP: "172.31.254.2"}, {Name: "w", InternalIP: "172.31.254.3"}}}
	tb := &Testbed{st: &state{RunID: "z1", Spec: Spec{Kind: k, Topology: Interconnect}, Nodes: []Node{{Name: "cp"}}}}
	zs := tb.Zones()
	if len(zs) != 2 || zs[0].Name != "cp" || zs[0].NB != "tcp:172.31.254.2:6641" || zs[1].Name != "w" ||
		zs[1].SB != "tcp:172.31.254.3:6642" || !zs[1].Has("w") || zs[1].Has("cp") {
		t.Errorf("interconnect zones %+v", zs)
	}
	if _, err := (Spec{RunID: "z1", Nodes: 2, Topology: Central, Kind: k}).withDefaults(); err == nil {
		t.Error("a central spec on an interconnect cluster: no error")
	}
	k.Topology = Central
	zs = tb.Zones()
	if len(zs) != 1 || zs[0].Name != GlobalZone || zs[0].NB != "tcp:172.31.254.2:6641" || !slices.Equal(zs[0].Nodes, []string{"cp"}) {
		t.Errorf("central zones %+v", zs)
	}
}
