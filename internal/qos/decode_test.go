package qos

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestDecodeManifestsErrors(t *testing.T) {
	nq := "apiVersion: k8s.ovn.org/v1alpha1\nkind: NetworkQoS\nmetadata: { name: q, namespace: ns }\n"
	cases := []struct{ name, in, want string }{
		{"unknown spec field", nq + "spec: { priority: 1, egress: [], bogus: 1 }\n",
			`f.yaml: document 1 (NetworkQoS q): unknown field "spec.bogus"`},
		{"unknown nested field", "---\n" + nq + "spec: { priority: 1, egress: [ { dscp: 1, classifier: { to: [ { ipBlok: {} } ] } } ] }\n",
			`f.yaml: document 1 (NetworkQoS q): unknown field "spec.egress[0].classifier.to[0].ipBlok"`},
		{"second document", "apiVersion: v1\nkind: Namespace\nmetadata: { name: a }\n---\n" + nq + "spec: { priority: x, egress: [] }\n",
			"f.yaml: document 2 (NetworkQoS q): json: cannot unmarshal string into Go struct field"},
		{"duplicate key", nq + "spec: { priority: 1, priority: 2, egress: [] }\n", "f.yaml: document 1: yaml: unmarshal errors:\n  line 4: key \"priority\" already set in map"},
		{"unknown kind", "apiVersion: apps/v1\nkind: Deployment\nmetadata: { name: d }\n",
			`f.yaml: document 1 (Deployment d): apiVersion/kind: unsupported "apps/v1" "Deployment"`},
		{"duplicate object", nq + "spec: { priority: 1, egress: [] }\n---\n" + nq + "spec: { priority: 2, egress: [] }\n",
			"f.yaml: document 2 (NetworkQoS q): duplicate NetworkQoS ns/q (first in document 1)"},
		{"missing name", "apiVersion: v1\nkind: Pod\nmetadata: { namespace: a }\n", "f.yaml: document 1 (Pod ): metadata.name: required"},
		{"list item", "apiVersion: v1\nkind: List\nitems:\n- apiVersion: v1\n  kind: Namespace\n  metadata: { name: a, bogus: 1 }\n",
			`f.yaml: document 1 item 0 (Namespace a): unknown field "metadata.bogus"`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := DecodeManifests(strings.NewReader(c.in), "f.yaml")
			if err == nil || !strings.HasPrefix(err.Error(), c.want) {
				t.Fatalf("error %v\nwant prefix %s", err, c.want)
			}
		})
	}
}

func TestDecodeManifestsDefaults(t *testing.T) {
	in := decodeString(t, `
apiVersion: v1
kind: List
items:
- apiVersion: v1
  kind: Pod
  metadata: { name: p }
---
# comment-only document
---
apiVersion: k8s.ovn.org/v1alpha1
kind: NetworkQoS
metadata: { name: q }
spec: { priority: 1, egress: [ { dscp: 3 } ] }
`)
	if len(in.Pods) != 1 || in.Pods[0].Namespace != "default" || len(in.NetworkQoSes) != 1 || in.NetworkQoSes[0].Namespace != "default" {
		t.Fatalf("decoded %+v", in)
	}
	if in.NetworkQoSes[0].Spec.Egress[0].DSCP != 3 {
		t.Errorf("dscp not decoded")
	}
}

func pod(ns, name, networks string) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Annotations: map[string]string{"k8s.v1.cni.cncf.io/networks": networks}}}
}

func TestPodAttachments(t *testing.T) {
	cases := []struct{ ann, want string }{
		{"blue", "ns/blue"},
		{"blue, other/red@eth2 ,green", "ns/blue,other/red,ns/green"},
		{`[{"name":"blue","interface":"net1"},{"name":"red","namespace":"other"}]`, "ns/blue,other/red"},
		{`[{"name":"blue"`, ""},
		{"a/b/c", ""},
		{"", ""},
	}
	for _, c := range cases {
		var keys []string
		for _, a := range podAttachments(pod("ns", "p", c.ann)) {
			keys = append(keys, a.key())
		}
		if got := strings.Join(keys, ","); got != c.want {
			t.Errorf("%q: %q, want %q", c.ann, got, c.want)
		}
	}
	// A pod attaching to one network through two NADs gets both ports.
	ports := podPorts(pod("vm", "p", "other/red, blue"), map[string]bool{"other/red": true, "vm/blue": true})
	if strings.Join(ports, ",") != "other.red_vm_p,vm.blue_vm_p" {
		t.Errorf("ports %v", ports)
	}
}

func TestPodIPs(t *testing.T) {
	p := pod("ns", "p", "blue")
	p.Annotations[podNetworksAnnotation] = `{"ns/blue":{"ip_addresses":["10.0.0.5/24","fd00::5/64","fe80::1%eth0","junk"]},"ns/red":{"ip_address":"10.9.0.1/24"}}`
	var got []string
	for _, a := range podIPs(p, map[string]bool{"ns/blue": true}) {
		got = append(got, a.String())
	}
	if strings.Join(got, ",") != "10.0.0.5,fd00::5" {
		t.Errorf("ips %v", got)
	}
}

func TestSnapshotImplicitNamespaces(t *testing.T) {
	s := NewSnapshot(Input{
		Namespaces: []*corev1.Namespace{{ObjectMeta: metav1.ObjectMeta{Name: "declared", Labels: map[string]string{"a": "b"}}}},
		Pods:       []*corev1.Pod{pod("implicit", "p", "")},
	})
	for name, labels := range map[string]int{"declared": 2, "implicit": 1} {
		ns, ok := s.Namespace(name)
		if !ok || ns.Labels[namespaceNameLabel] != name || len(ns.Labels) != labels {
			t.Errorf("namespace %s: %+v", name, ns)
		}
	}
	if len(s.Namespaces()) != 2 || len(s.PodsInNamespace("implicit")) != 1 {
		t.Errorf("snapshot %+v", s)
	}
}
