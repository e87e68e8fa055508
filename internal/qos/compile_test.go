package qos

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
)

// decodeString decodes inline manifests.
func decodeString(t testing.TB, s string) Input {
	t.Helper()
	in, err := DecodeManifests(strings.NewReader(s), "inline")
	if err != nil {
		t.Fatalf("decode: %v", err)
	}
	return in
}

func rowOf(t *testing.T, d Desired, object, rule string) QoSRow {
	t.Helper()
	for _, q := range d.QoS {
		if q.ExternalIDs[ObjectNameKey] == object && q.ExternalIDs[RuleIndexKey] == rule {
			return q
		}
	}
	t.Fatalf("no QoS row for %s rule %s", object, rule)
	return QoSRow{}
}

func portGroupOf(t *testing.T, d Desired, object string) PortGroup {
	t.Helper()
	for _, pg := range d.PortGroups {
		if pg.ExternalIDs[ObjectNameKey] == object {
			return pg
		}
	}
	t.Fatalf("no port group for %s", object)
	return PortGroup{}
}

// TestWorkedExample checks the OKEP-6815 table row by row, independent of
// the golden file.
func TestWorkedExample(t *testing.T) {
	d := compileFile(t, "testdata/okep-worked-example.yaml")
	cases := []struct {
		object, rule string
		prio, dscp   int
		bw           *Bandwidth
		dst          string
	}{
		{"vms:tier-production", "0", 10600, 46, nil, " && (ip4 || ip6)"},
		{"vms:tier-staging", "0", 10400, 10, nil, " && (ip4 || ip6)"},
		{"vms:backup-deprioritization", "0", 10700, 46, nil, " && (ip4 || ip6)"},
		{"vms:backup-deprioritization", "1", 10701, 8, &Bandwidth{Rate: 100000, Burst: 5000}, " && ip4.dst == 10.20.0.0/16 && tcp && tcp.dst == 2049"},
	}
	if len(d.QoS) != len(cases) {
		t.Fatalf("%d QoS rows, want %d: %+v", len(d.QoS), len(cases), d.QoS)
	}
	for _, c := range cases {
		q := rowOf(t, d, c.object, c.rule)
		pg := portGroupOf(t, d, c.object)
		if q.Priority != c.prio || q.Action.DSCP != c.dscp || q.Direction != DirectionToLport {
			t.Errorf("%s/%s: priority %d dscp %d dir %s, want %d %d to-lport", c.object, c.rule, q.Priority, q.Action.DSCP, q.Direction, c.prio, c.dscp)
		}
		if (q.Bandwidth == nil) != (c.bw == nil) || (c.bw != nil && *q.Bandwidth != *c.bw) {
			t.Errorf("%s/%s: bandwidth %+v, want %+v", c.object, c.rule, q.Bandwidth, c.bw)
		}
		if want := "inport == @" + pg.Name + c.dst; q.Match != want {
			t.Errorf("%s/%s: match %q, want %q", c.object, c.rule, q.Match, want)
		}
		if q.Switch != "tenant.blue_ovn_localnet_switch" {
			t.Errorf("switch %q", q.Switch)
		}
	}
	payments := "vms.tenant.blue_vms_virt-launcher-payments-7xk2p"
	for _, obj := range []string{"vms:tier-production", "vms:backup-deprioritization"} {
		if pg := portGroupOf(t, d, obj); len(pg.Ports) != 1 || pg.Ports[0] != payments {
			t.Errorf("%s ports %v, want [%s]", obj, pg.Ports, payments)
		}
	}
}

// TestRejectedYieldNoRows covers the OKEP's Accepted=False cases.
func TestRejectedYieldNoRows(t *testing.T) {
	cases := []struct {
		file    string
		message []string
	}{
		{"testdata/rejected-ipamless-labeled-dest.yaml", []string{"egress rules 1, 2:", "(tenant-blue)", "use ipBlock instead"}},
		{"testdata/rejected-mixed-networks.yaml", []string{"egress rule 0:", "(static-net)"}},
	}
	for _, c := range cases {
		d := compileFile(t, c.file)
		if len(d.PortGroups)+len(d.AddressSets)+len(d.QoS) != 0 {
			t.Errorf("%s: rejected object produced rows: %+v", c.file, d)
		}
		cond := d.NetworkQoS[0].Conditions[0]
		if cond.Status != "False" || cond.Reason != ReasonUnsupportedDestinationSelector {
			t.Errorf("%s: condition %+v", c.file, cond)
		}
		for _, m := range c.message {
			if !strings.Contains(cond.Message, m) {
				t.Errorf("%s: message %q lacks %q", c.file, cond.Message, m)
			}
		}
		if strings.Contains(cond.Message, "ipam-net") {
			t.Errorf("%s: message names the discoverable network: %q", c.file, cond.Message)
		}
	}
}

// TestDHCPDestinationSelector: a subnet-less DHCP localnet accepts labeled
// destinations and fills v4 address sets from pod-networks.
func TestDHCPDestinationSelector(t *testing.T) {
	d := compileFile(t, "testdata/dhcp-dest-podselector.yaml")
	if c := d.NetworkQoS[0].Conditions[0]; c.Status != "True" {
		t.Fatalf("condition %+v", c)
	}
	want := map[string][]string{"0:0:v4": {"192.168.77.21"}, "1:0:v4": {"192.168.77.31"}}
	if len(d.AddressSets) != len(want) {
		t.Fatalf("address sets %+v", d.AddressSets)
	}
	for _, as := range d.AddressSets {
		id := as.ExternalIDs[PrimaryIDKey]
		suffix := id[strings.Index(id, "web-to-data:")+len("web-to-data:"):]
		if strings.Join(as.Addresses, ",") != strings.Join(want[suffix], ",") {
			t.Errorf("set %s: %v, want %v", id, as.Addresses, want[suffix])
		}
		if as.Name != hashForOVN(id) {
			t.Errorf("set name %s is not the hash of %s", as.Name, id)
		}
		found := false
		for _, q := range d.QoS {
			found = found || strings.Contains(q.Match, "ip4.dst == {$"+as.Name+"}")
		}
		if !found {
			t.Errorf("no match references %s", as.Name)
		}
	}
}

// TestNodeFilter: with a node name only that node's pods are members.
func TestNodeFilter(t *testing.T) {
	f := openTestdata(t, "story1-tiers.yaml")
	in, err := DecodeManifests(f, "story1")
	if err != nil {
		t.Fatal(err)
	}
	for node, want := range map[string]string{
		"node-a": "prod.vms.vm.net_prod-vms_virt-launcher-db-1",
		"node-b": "prod.vms.vm.net_prod-vms_virt-launcher-db-2",
		"":       "prod.vms.vm.net_prod-vms_virt-launcher-db-1,prod.vms.vm.net_prod-vms_virt-launcher-db-2",
	} {
		in.Node = node
		d := Compile(in)
		if got := strings.Join(portGroupOf(t, d, "prod-vms:tier-production").Ports, ","); got != want {
			t.Errorf("node %q: ports %s, want %s", node, got, want)
		}
		if len(d.QoS) != 2 {
			t.Errorf("node %q: %d rows, want 2 (rows do not depend on the node)", node, len(d.QoS))
		}
	}
}

var baseNetwork = nadManifest("ns1", "net1", "%TOPO%") + `---
apiVersion: k8s.ovn.org/v1alpha1
kind: NetworkQoS
metadata: { name: q, namespace: ns1 }
spec:
%SELECTORS%
  priority: 1
  egress:
  - dscp: 1
`

const nadSelector = `  networkSelectors:
  - networkSelectionType: NetworkAttachmentDefinitions
    networkAttachmentDefinitionSelector:
      namespaceSelector: {}
      networkSelector: { matchLabels: { qos: "on" } }`

func TestWarnings(t *testing.T) {
	cases := []struct {
		name, topo, selectors, warning string
	}{
		{"no networkSelectors", "localnet", "", "ns1/q: no networkSelectors: only the default network is selected"},
		{"layer3", "layer3", nadSelector, `ns1/q: network net1 has topology "layer3"; only localnet and layer2 are supported`},
		{"nothing selected", "localnet", strings.Replace(nadSelector, `qos: "on"`, `qos: "off"`, 1), "ns1/q: networkSelectors select no network"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			y := strings.NewReplacer("%TOPO%", c.topo, "%SELECTORS%", c.selectors).Replace(baseNetwork)
			d := Compile(decodeString(t, y))
			if len(d.QoS)+len(d.PortGroups) != 0 {
				t.Errorf("rows: %+v", d)
			}
			if d.NetworkQoS[0].Conditions[0].Status != "True" {
				t.Errorf("condition %+v", d.NetworkQoS[0].Conditions[0])
			}
			if len(d.Warnings) != 1 || !strings.HasPrefix(d.Warnings[0], c.warning) {
				t.Errorf("warnings %q, want prefix %q", d.Warnings, c.warning)
			}
		})
	}
}

// countingFacts records which namespaces' pods a compile reads.
type countingFacts struct {
	Facts
	read map[string]int
}

func (c *countingFacts) PodsInNamespace(ns string) []*corev1.Pod {
	c.read[ns]++
	return c.Facts.PodsInNamespace(ns)
}

// TestCompileObjectTouchesOnlySelectedNamespaces: a compile reads the pods
// of the object's namespace (sources) and of the namespaces its
// destinations select, nothing else.
func TestCompileObjectTouchesOnlySelectedNamespaces(t *testing.T) {
	in := benchInput(8, 20, 200)
	f := &countingFacts{Facts: NewSnapshot(in), read: map[string]int{}}
	r := CompileObject(in.NetworkQoSes[0], f, "") // has an own-namespace podSelector destination
	if r.Err != nil || len(r.QoS) == 0 {
		t.Fatalf("result %+v", r)
	}
	if len(f.read) != 1 || f.read["ns-0"] == 0 {
		t.Errorf("pods read from %v, want only ns-0", f.read)
	}
	f.read = map[string]int{}
	CompileObject(in.NetworkQoSes[1], f, "") // no selector destination
	if len(f.read) != 1 || f.read["ns-1"] != 1 {
		t.Errorf("pods read from %v, want ns-1 once", f.read)
	}
}
