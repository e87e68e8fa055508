package qos

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	nadv1 "github.com/nqos/nqos/api/nad/v1"
)

func TestNaming(t *testing.T) {
	cases := []struct{ name, got, want string }{
		// Upstream's documented example of HashForOVN.
		{"hash", hashForOVN("default-network-controller:NetworkQoS:ns1:qos1:src:0:v4"), "a17227640409741985825"},
		{"localnet switch", SwitchName("netwk1", TopologyLocalnet), "netwk1_ovn_localnet_switch"},
		{"layer2 switch", SwitchName("netwk2", TopologyLayer2), "netwk2_ovn_layer2_switch"},
		{"cudn switch", SwitchName("cluster_udn_foo-bar", TopologyLocalnet), "cluster_udn_foo.bar_ovn_localnet_switch"},
		{"layer3 switch", SwitchName("n", TopologyLayer3), ""},
		{"lsp", LogicalPortName("ns1", "blue-net", "ns1", "virt-launcher-vm1-abcde"), "ns1.blue.net_ns1_virt-launcher-vm1-abcde"},
		{"controller", ControllerName("tenant-blue"), "tenant-blue-nqos-controller"},
		{"ovnkube controller", OVNKubeControllerName("tenant-blue"), "tenant-blue-network-controller"},
		{"port group", PortGroupName("c", "ns", "n"), hashForOVN("c:NetworkQoS:ns:n")},
		{"qos id", qosIDs("net", "ns", "n", 3)[PrimaryIDKey], "net-nqos-controller:NetworkQoS:ns:n:3"},
		{"as id", addressSetIDs("net", "ns", "n", 1, 2, "v6")[PrimaryIDKey], "net-nqos-controller:NetworkQoS:ns:n:1:2:v6"},
		{"own src set name", hashForOVN(setIDs("default", "ns1", "qos1", "src", "0", "v4")[PrimaryIDKey]), hashForOVN("default-nqos-controller:NetworkQoS:ns1:qos1:src:0:v4")},
	}
	for _, c := range cases {
		if c.got != c.want {
			t.Errorf("%s: %q, want %q", c.name, c.got, c.want)
		}
	}
	if p := qosPriority(100, 0); p != 11000 {
		t.Errorf("priority 100/0 = %d", p)
	}
	if p := qosPriority(1, 0); p != 10010 {
		t.Errorf("priority 1/0 = %d", p)
	}
}

func nad(config string, annotations map[string]string) *nadv1.NetworkAttachmentDefinition {
	return &nadv1.NetworkAttachmentDefinition{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "n", Annotations: annotations},
		Spec:       nadv1.Spec{Config: config},
	}
}

func TestParseNAD(t *testing.T) {
	cases := []struct {
		name, config string
		ann          map[string]string
		want         Network
		discover     bool
		err          string
	}{
		{name: "ipamless localnet", config: `{"name":"blue","type":"ovn-k8s-cni-overlay","topology":"localnet","physicalNetworkName":"physnet","vlanID":100,"mtu":1400}`,
			want: Network{Name: "blue", Topology: "localnet", Switch: "blue_ovn_localnet_switch", PhysicalNetworkName: "physnet", VLAN: 100, MTU: 1400}},
		{name: "subnets", config: `{"name":"s","type":"ovn-k8s-cni-overlay","topology":"layer2","subnets":"10.1.0.0/24, fd00::/64"}`,
			want: Network{Name: "s", Topology: "layer2", Switch: "s_ovn_layer2_switch", Subnets: []string{"10.1.0.0/24", "fd00::/64"}}, discover: true},
		{name: "dhcp", config: `{"name":"d","type":"ovn-k8s-cni-overlay","topology":"localnet","ipam":{"type":"dhcp"}}`,
			want: Network{Name: "d", Topology: "localnet", Switch: "d_ovn_localnet_switch", IPAMType: "dhcp"}, discover: true},
		{name: "network-name annotation", config: `{"name":"x","type":"ovn-k8s-cni-overlay","topology":"localnet"}`, ann: map[string]string{networkNameAnnotation: "cluster_udn_x"},
			want: Network{Name: "cluster_udn_x", Topology: "localnet", Switch: "cluster_udn_x_ovn_localnet_switch"}},
		{name: "conflist", config: `{"name":"c","plugins":[{"type":"tuning"},{"type":"ovn-k8s-cni-overlay","topology":"localnet"}]}`,
			want: Network{Name: "c", Topology: "localnet", Switch: "c_ovn_localnet_switch"}},
		{name: "not ovn", config: `{"name":"m","type":"macvlan"}`, err: `NAD ns/n: spec.config: type "macvlan": not an ovn-k8s-cni-overlay attachment`},
		{name: "bad json", config: `{`, err: "NAD ns/n: spec.config: invalid CNI config JSON"},
		{name: "bad subnet", config: `{"name":"b","type":"ovn-k8s-cni-overlay","subnets":"10.0.0.0/99"}`, err: `NAD ns/n: spec.config: subnets: invalid subnet "10.0.0.0/99"`},
		{name: "dhcp and subnets", config: `{"name":"b","type":"ovn-k8s-cni-overlay","subnets":"10.0.0.0/24","ipam":{"type":"dhcp"}}`, err: "mutually exclusive"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := ParseNAD(nad(c.config, c.ann))
			if c.err != "" {
				if err == nil || !contains(err.Error(), c.err) {
					t.Fatalf("error %v, want %q", err, c.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			c.want.NADs = []string{"ns/n"}
			if fmtNet(got) != fmtNet(c.want) {
				t.Errorf("got  %s\nwant %s", fmtNet(got), fmtNet(c.want))
			}
			if got.DiscoverablePodIPs() != c.discover {
				t.Errorf("discoverable %v", got.DiscoverablePodIPs())
			}
		})
	}
}
