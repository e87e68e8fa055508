package intent

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/nqos/nqos/internal/qos"
)

// TestMeterSharing: three selected VMs pinned to node1 and one to node2
// share the rule's meter per node, as the sentence says.
func TestMeterSharing(t *testing.T) {
	text := largeSet(1, 4)
	text = strings.ReplaceAll(text, "    spec:\n      domain:", "    spec:\n      nodeSelector: {kubernetes.io/hostname: NODE}\n      domain:")
	for _, node := range []string{"node1", "node1", "node2", "node1"} {
		text = strings.Replace(text, "NODE", node, 1)
	}
	v := explainObjects(t, readText(t, text), []string{"node1", "node2"}, []Family{V4})
	if len(v.Meters) != 2 {
		t.Fatalf("meters %+v, want one per node", v.Meters)
	}
	want := "cap 100000 kbps per node, shared on node1 by 3 selected VMs (ns0/vm0, ns0/vm1, ns0/vm3)"
	if got := v.Meters[0].String(); got != want {
		t.Errorf("node1: %q, want %q", got, want)
	}
	if got := v.Meters[1].String(); got != "cap 100000 kbps per node, on node2 for ns0/vm2 alone" {
		t.Errorf("node2: %q", got)
	}
	for _, p := range v.Probes {
		if (p.Intent.MeterKbps != nil) != (p.Sharing != nil) {
			t.Errorf("%s %s %s/%d: meter %v, sharing %v", p.VM, p.Dst, p.Protocol, p.Port, p.Intent.MeterKbps, p.Sharing)
		}
	}
}

// TestMeterPerVM: the same VMs under a per-port object each have their
// own meter, and every metered probe names its own VM's.
func TestMeterPerVM(t *testing.T) {
	text := largeSet(1, 4)
	text = strings.ReplaceAll(text, "    spec:\n      domain:", "    spec:\n      nodeSelector: {kubernetes.io/hostname: NODE}\n      domain:")
	for _, node := range []string{"node1", "node1", "node2", "node1"} {
		text = strings.Replace(text, "NODE", node, 1)
	}
	text = strings.Replace(text, "metadata: {name: q0, namespace: ns0}",
		"metadata: {name: q0, namespace: ns0, annotations: {"+qos.BandwidthScopeAnnotation+": "+qos.BandwidthScopePerPort+"}}", 1)
	v := explainObjects(t, readText(t, text), []string{"node1", "node2"}, []Family{V4})
	if len(v.Meters) != 4 {
		t.Fatalf("meters %+v, want one per VM", v.Meters)
	}
	want := "cap 100000 kbps per VM NIC, on node1 for ns0/vm0 alone (" + qos.BandwidthScopeAnnotation + "=per-port)"
	if got := v.Meters[0].String(); got != want || !v.Meters[0].PerVM {
		t.Errorf("vm0: %q, want %q", got, want)
	}
	metered := 0
	for _, p := range v.Probes {
		if p.Intent.MeterKbps == nil {
			continue
		}
		metered++
		if p.Sharing == nil || !p.Sharing.PerVM || len(p.Sharing.VMs) != 1 || p.Sharing.VMs[0] != p.VM {
			t.Errorf("%s %s %s/%d: sharing %+v, want the VM's own meter", p.VM, p.Dst, p.Protocol, p.Port, p.Sharing)
		}
	}
	if metered == 0 {
		t.Fatal("no metered probe")
	}
}

// TestFromLive: launcher pods are the VMs (labels, node, networks
// annotation); the NAD a CUDN rendered is not counted twice; a VM without
// known addresses is derived from the documentation ranges with a note.
func TestFromLive(t *testing.T) {
	objs := readText(t, largeSet(1, 0))
	var raws []map[string]any
	for _, o := range objs {
		raws = append(raws, o.Raw)
	}
	raws = append(raws, map[string]any{"apiVersion": "k8s.cni.cncf.io/v1", "kind": "NetworkAttachmentDefinition",
		"metadata": map[string]any{"name": "tenant", "namespace": "ns0", "managedFields": []any{}},
		"spec":     map[string]any{"config": `{"cniVersion":"1.0.0","name":"cluster_udn_tenant","type":"ovn-k8s-cni-overlay","topology":"localnet","physicalNetworkName":"physnet","netAttachDefName":"ns0/tenant"}`}})
	pod := func(name, node string, labels map[string]string) *corev1.Pod {
		labels[LabelKubeVirt] = LauncherLabelValue
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "virt-launcher-" + name + "-abcde", Namespace: "ns0", Labels: labels,
			Annotations: map[string]string{"k8s.v1.cni.cncf.io/networks": `[{"name":"tenant","namespace":"ns0"}]`}},
			Spec: corev1.PodSpec{NodeName: node}}
	}
	l := &Live{Source: "test cluster", Objects: raws, Pods: []*corev1.Pod{
		pod("a", "node7", map[string]string{"app": "a0", LabelVMName: "a"}),
		pod("b", "", map[string]string{"app": "a0", LabelVMName: "b"}),
	}}
	c, err := FromLive(l)
	if err != nil {
		t.Fatal(err)
	}
	if len(c.VMs) != 1 || c.VMs[0].Ref != "ns0/a" || c.VMs[0].Node != "node7" || !c.VMs[0].Unknown || !strings.HasSuffix(c.VMs[0].Port, "ns0_virt-launcher-a-abcde") {
		t.Fatalf("VMs %+v", c.VMs)
	}
	if len(c.Notes) != 2 || !strings.Contains(strings.Join(c.Notes, "\n"), "ns0/b: launcher pod virt-launcher-b-abcde not scheduled") {
		t.Errorf("notes %q", c.Notes)
	}
	v, err := Explain(c, Options{OVN: "25.03", Families: []Family{V4}})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, p := range v.Probes {
		got = append(got, p.Dst.String()+" "+p.Protocol+" "+DSCPText(p.Intent.DSCP))
	}
	if strings.Join(got, ",") != "10.20.0.1 tcp 8,10.20.0.1 tcp 46,10.20.0.1 udp 46,192.0.2.1 tcp 46,192.0.2.1 tcp 46,192.0.2.1 udp 46" {
		t.Errorf("classes %q", got)
	}
	if len(v.Meters) != 1 || v.Meters[0].Node != "node7" {
		t.Errorf("meters %+v", v.Meters)
	}
}
