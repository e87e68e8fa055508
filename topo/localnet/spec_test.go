package localnet

import (
	"strings"
	"testing"
)

func TestValidateRunID(t *testing.T) {
	for _, tc := range []struct {
		id string
		ok bool
	}{{"t1", true}, {"abcd", true}, {"a", true}, {"", false}, {"abcde", false}, {"T1", false}, {"t-1", false}} {
		if err := ValidateRunID(tc.id); (err == nil) != tc.ok {
			t.Errorf("ValidateRunID(%q) = %v, want ok=%v", tc.id, err, tc.ok)
		}
	}
}

func TestNamesFitInterfaceLimit(t *testing.T) {
	for _, n := range []string{
		first(uplinkNames("abcd", 16)), second(uplinkNames("abcd", 16)),
		first(hostLinkNames("abcd", 99)), second(hostLinkNames("abcd", 99)),
		first(guestLinkNames("abcd", 9999)), second(guestLinkNames("abcd", 9999)), fabricBridge("abcd"),
		first(routerLinkNames("abcd", 99)), second(routerLinkNames("abcd", 99)),
	} {
		if len(n) > 15 {
			t.Errorf("interface name %q has %d > 15 characters", n, len(n))
		}
		if !rootLinkPattern("abcd").MatchString(n) && n != fabricBridge("abcd") {
			t.Errorf("Down would not find %q", n)
		}
		if rootLinkPattern("abc").MatchString(n) || rootLinkPattern("ab").MatchString(n) {
			t.Errorf("%q matches another run's link pattern", n)
		}
	}
	if ifindexBase("t1") == ifindexBase("t2") {
		t.Errorf("runs t1 and t2 share ifindex range %d", ifindexBase("t1"))
	}
}

func first(a, _ string) string  { return a }
func second(_, b string) string { return b }

func TestSpecDefaultsAndErrors(t *testing.T) {
	s, err := Spec{RunID: "t9"}.withDefaults()
	if err != nil {
		t.Fatal(err)
	}
	if s.Nodes != 2 || s.IPFamily != IPv4 || s.FabricMTU != 1500 || len(s.Networks) != 1 || len(s.Hosts) != 3 {
		t.Fatalf("defaults: nodes %d family %s mtu %d networks %d hosts %d", s.Nodes, s.IPFamily, s.FabricMTU, len(s.Networks), len(s.Hosts))
	}
	n := s.Networks[0]
	if n.Switch != "tenant.blue_ovn_localnet_switch" || n.LocalnetPort() != "tenant.blue_ovn_localnet_port" || n.VLAN != 100 || n.PhysicalNetworkName != "physnet" {
		t.Fatalf("default network %+v", n.Network)
	}
	if got := s.bridgeMappings(); got != "physnet:br-phys" {
		t.Fatalf("bridge mappings %q", got)
	}
	for _, tc := range []struct {
		spec Spec
		want string
	}{
		{Spec{RunID: "toolong"}, "run ID"},
		{Spec{RunID: "t9", Nodes: 17}, "spec.Nodes"},
		{Spec{RunID: "t9", Nodes: 2, NodeLabels: map[string]map[string]string{"node3": {"a": "b"}}}, `spec.NodeLabels: "node3" is not a node (node1..node2)`},
		{Spec{RunID: "t9", IPFamily: "v5"}, "spec.IPFamily"},
		{Spec{RunID: "t9", FabricMTU: 100}, "spec.FabricMTU"},
		{Spec{RunID: "t9", Hosts: []HostSpec{{Name: "x", Network: "nope"}}}, `network "nope"`},
		{Spec{RunID: "t9", Hosts: []HostSpec{{Name: "x", Network: "tenant-blue", IPv4: "10.0.0.1"}}}, "IPv4"},
		{Spec{RunID: "t9", Hosts: []HostSpec{{Name: "x", Network: "tenant-blue"}, {Name: "x", Network: "tenant-blue"}}}, "duplicate"},
	} {
		_, err := tc.spec.withDefaults()
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: error %v, want one mentioning %q", tc.spec, err, tc.want)
		}
	}
}

func TestHostAddrsFollowFamily(t *testing.T) {
	h := HostSpec{IPv4: "10.20.0.10/16", IPv6: "fd00:20::10/64"}
	for fam, want := range map[IPFamily]string{IPv4: "10.20.0.10/16", IPv6: "fd00:20::10/64", DualStack: "10.20.0.10/16 fd00:20::10/64"} {
		if got := strings.Join(Spec{IPFamily: fam}.hostAddrs(h), " "); got != want {
			t.Errorf("%s: %q, want %q", fam, got, want)
		}
	}
}
