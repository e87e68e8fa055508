package controller

import (
	"sort"

	corev1 "k8s.io/api/core/v1"

	nadv1 "github.com/nqos/nqos/api/nad/v1"
	udnv1 "github.com/nqos/nqos/api/udn/v1"
	"github.com/nqos/nqos/internal/qos"
)

// informerFacts implements qos.Facts over the informer caches: pods come
// from the namespace index, so a compile reads only the namespaces its
// object selects. Every list is sorted for deterministic output.
type informerFacts struct {
	inf *informerSet
}

var _ qos.Facts = (*informerFacts)(nil)

func (f *informerFacts) Namespace(name string) (*corev1.Namespace, bool) {
	obj, ok, err := f.inf.namespaces.GetIndexer().GetByKey(name)
	if err != nil || !ok {
		return nil, false
	}
	ns, ok := obj.(*corev1.Namespace)
	return ns, ok
}

func (f *informerFacts) Namespaces() []*corev1.Namespace {
	return sortedByKey[corev1.Namespace](f.inf.namespaces.GetIndexer().List())
}

func (f *informerFacts) PodsInNamespace(namespace string) []*corev1.Pod {
	objs, err := f.inf.podsInNamespace(namespace)
	if err != nil {
		return nil
	}
	return sortedByKey[corev1.Pod](objs)
}

func (f *informerFacts) NADs() []*nadv1.NetworkAttachmentDefinition {
	return sortedByKey[nadv1.NetworkAttachmentDefinition](f.inf.nads.GetIndexer().List())
}

func (f *informerFacts) CUDN(name string) (*udnv1.ClusterUserDefinedNetwork, bool) {
	if f.inf.cudns == nil {
		return nil, false
	}
	obj, ok, err := f.inf.cudns.GetIndexer().GetByKey(name)
	if err != nil || !ok {
		return nil, false
	}
	c, ok := obj.(*udnv1.ClusterUserDefinedNetwork)
	return c, ok
}

// sortedByKey keeps the objects of type *T, sorted by namespace/name.
func sortedByKey[T any, PT interface {
	*T
	GetNamespace() string
	GetName() string
}](objs []any) []PT {
	out := make([]PT, 0, len(objs))
	for _, o := range objs {
		if t, ok := o.(PT); ok {
			out = append(out, t)
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if a, b := out[i].GetNamespace(), out[j].GetNamespace(); a != b {
			return a < b
		}
		return out[i].GetName() < out[j].GetName()
	})
	return out
}
