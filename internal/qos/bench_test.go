package qos

import (
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	nadv1 "github.com/nqos/nqos/api/nad/v1"
	"github.com/nqos/nqos/api/v1alpha1"
)

// benchInput builds nq NetworkQoS objects over nsCount namespaces and
// pods pods; 10 networks (even ones with subnets), each pod attached to
// one of them, every fourth object with a labeled destination on an IPAM
// network.
func benchInput(nq, nsCount, pods int) Input {
	var in Input
	const nets = 10
	for k := 0; k < nets; k++ {
		subnets := ""
		if k%2 == 0 {
			subnets = fmt.Sprintf(`,"subnets":"10.%d.0.0/16"`, k)
		}
		in.NADs = append(in.NADs, &nadv1.NetworkAttachmentDefinition{
			ObjectMeta: metav1.ObjectMeta{Namespace: fmt.Sprintf("ns-%d", k), Name: fmt.Sprintf("net-%d", k), Labels: map[string]string{"net": fmt.Sprint(k)}},
			Spec:       nadv1.Spec{Config: fmt.Sprintf(`{"name":"net-%d","type":"ovn-k8s-cni-overlay","topology":"localnet"%s}`, k, subnets)},
		})
	}
	for i := 0; i < pods; i++ {
		k := i % nets
		in.Pods = append(in.Pods, &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Namespace: fmt.Sprintf("ns-%d", i%nsCount), Name: fmt.Sprintf("pod-%d", i),
				Labels: map[string]string{"app": fmt.Sprintf("app-%d", i%7)},
				Annotations: map[string]string{
					nadv1.NetworksAnnotation: fmt.Sprintf("ns-%d/net-%d", k, k),
					podNetworksAnnotation:    fmt.Sprintf(`{"ns-%d/net-%d":{"ip_addresses":["10.%d.%d.%d/16"]}}`, k, k, k, (i/250)%250, i%250),
				}},
			Spec: corev1.PodSpec{NodeName: fmt.Sprintf("node-%d", i%4)},
		})
	}
	port := int32(443)
	for j := 0; j < nq; j++ {
		k := (j * 2) % nets
		if j%4 != 0 {
			k = j % nets
		}
		rules := []v1alpha1.Rule{{DSCP: 46}, {DSCP: 8, Bandwidth: &v1alpha1.Bandwidth{Rate: 1000},
			Classifier: &v1alpha1.Classifier{To: []v1alpha1.Destination{{IPBlock: &v1alpha1.IPBlock{CIDR: "10.20.0.0/16", Except: []string{"10.20.1.0/24"}}}},
				Ports: []*v1alpha1.Port{{Protocol: "TCP", Port: &port}}}}}
		if j%4 == 0 {
			rules = append(rules, v1alpha1.Rule{DSCP: 26, Classifier: &v1alpha1.Classifier{To: []v1alpha1.Destination{
				{PodSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "app-1"}}}}}})
		}
		in.NetworkQoSes = append(in.NetworkQoSes, &v1alpha1.NetworkQoS{
			ObjectMeta: metav1.ObjectMeta{Namespace: fmt.Sprintf("ns-%d", j%nsCount), Name: fmt.Sprintf("q-%d", j)},
			Spec: v1alpha1.Spec{
				NetworkSelectors: v1alpha1.NetworkSelectors{{NetworkSelectionType: v1alpha1.NetworkAttachmentDefinitions,
					NetworkAttachmentDefinitionSelector: &v1alpha1.NetworkAttachmentDefinitionSelector{
						NetworkSelector: metav1.LabelSelector{MatchLabels: map[string]string{"net": fmt.Sprint(k)}}}}},
				PodSelector: metav1.LabelSelector{MatchLabels: map[string]string{"app": fmt.Sprintf("app-%d", j%7)}},
				Priority:    j % 101,
				Egress:      rules,
			},
		})
	}
	return in
}

// BenchmarkCompile1000x10000 compiles 1000 NetworkQoS over 100 namespaces
// and 10 000 pods (one whole-cluster Compile per op).
func BenchmarkCompile1000x10000(b *testing.B) {
	in := benchInput(1000, 100, 10000)
	d := Compile(in)
	if len(d.QoS) == 0 || len(d.AddressSets) == 0 {
		b.Fatalf("benchmark input compiles to nothing: %d rows, %d sets", len(d.QoS), len(d.AddressSets))
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		Compile(in)
	}
}

// BenchmarkCompileObject measures one object's compile against a prebuilt
// snapshot of the same cluster, as the controller does per reconcile.
func BenchmarkCompileObject(b *testing.B) {
	in := benchInput(1000, 100, 10000)
	f := NewSnapshot(in)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		CompileObject(in.NetworkQoSes[i%len(in.NetworkQoSes)], f, "")
	}
}
