package qos

import (
	"sort"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	nadv1 "github.com/nqos/nqos/api/nad/v1"
	udnv1 "github.com/nqos/nqos/api/udn/v1"
)

// namespaceNameLabel is the label the API server puts on every namespace.
const namespaceNameLabel = "kubernetes.io/metadata.name"

// Snapshot is an immutable in-memory Facts built from an Input: pods are
// indexed by namespace, and namespaces referenced by any object but not
// declared exist with only the kubernetes.io/metadata.name label.
type Snapshot struct {
	namespaces map[string]*corev1.Namespace
	nsOrder    []*corev1.Namespace
	pods       map[string][]*corev1.Pod
	nads       []*nadv1.NetworkAttachmentDefinition
	cudns      map[string]*udnv1.ClusterUserDefinedNetwork
}

// NewSnapshot indexes in. Input objects are not modified: declared
// namespaces are copied before the metadata.name label is added.
func NewSnapshot(in Input) *Snapshot {
	s := &Snapshot{
		namespaces: make(map[string]*corev1.Namespace, len(in.Namespaces)),
		pods:       make(map[string][]*corev1.Pod),
		cudns:      make(map[string]*udnv1.ClusterUserDefinedNetwork, len(in.CUDNs)),
	}
	for _, ns := range in.Namespaces {
		c := ns.DeepCopy()
		if c.Labels == nil {
			c.Labels = map[string]string{}
		}
		c.Labels[namespaceNameLabel] = c.Name
		s.namespaces[c.Name] = c
	}
	for _, p := range in.Pods {
		s.pods[p.Namespace] = append(s.pods[p.Namespace], p)
		s.implicitNamespace(p.Namespace)
	}
	for _, pods := range s.pods {
		sort.Slice(pods, func(i, j int) bool { return pods[i].Name < pods[j].Name })
	}
	s.nads = append(s.nads, in.NADs...)
	sort.Slice(s.nads, func(i, j int) bool {
		return nadKey(s.nads[i]) < nadKey(s.nads[j])
	})
	for _, n := range in.NADs {
		s.implicitNamespace(n.Namespace)
	}
	for _, nq := range in.NetworkQoSes {
		s.implicitNamespace(nq.Namespace)
	}
	for _, c := range in.CUDNs {
		s.cudns[c.Name] = c
	}
	for _, ns := range s.namespaces {
		s.nsOrder = append(s.nsOrder, ns)
	}
	sort.Slice(s.nsOrder, func(i, j int) bool { return s.nsOrder[i].Name < s.nsOrder[j].Name })
	return s
}

func (s *Snapshot) implicitNamespace(name string) {
	if _, ok := s.namespaces[name]; ok || name == "" {
		return
	}
	s.namespaces[name] = &corev1.Namespace{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Namespace"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{namespaceNameLabel: name}},
	}
}

// Namespace returns a namespace by name.
func (s *Snapshot) Namespace(name string) (*corev1.Namespace, bool) {
	ns, ok := s.namespaces[name]
	return ns, ok
}

// Namespaces returns every namespace, sorted by name.
func (s *Snapshot) Namespaces() []*corev1.Namespace { return s.nsOrder }

// PodsInNamespace returns the pods of one namespace, sorted by name.
func (s *Snapshot) PodsInNamespace(namespace string) []*corev1.Pod { return s.pods[namespace] }

// NADs returns every NAD, sorted by namespace/name.
func (s *Snapshot) NADs() []*nadv1.NetworkAttachmentDefinition { return s.nads }

// CUDN returns a ClusterUserDefinedNetwork by name.
func (s *Snapshot) CUDN(name string) (*udnv1.ClusterUserDefinedNetwork, bool) {
	c, ok := s.cudns[name]
	return c, ok
}

func nadKey(n *nadv1.NetworkAttachmentDefinition) string { return n.Namespace + "/" + n.Name }
