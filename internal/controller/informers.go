package controller

import (
	"context"
	"errors"
	"fmt"
	"sort"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/informers"
	coreinformers "k8s.io/client-go/informers/core/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"

	nadv1 "github.com/nqos/nqos/api/nad/v1"
	udnv1 "github.com/nqos/nqos/api/udn/v1"
	"github.com/nqos/nqos/api/v1alpha1"
)

// destSelectorIndex indexes NetworkQoS objects that have a destination
// pod/namespace selector: pods anywhere can change their address sets.
const destSelectorIndex = "destSelector"

// informerSet holds the informers; the CUDN informer is nil when the CUDN
// CRD is not installed. The dynamic informers store typed objects (a
// transform converts them once), so readers never convert again.
//
// A zone controller (node set) watches its node's pods in full (field
// selector spec.nodeName=<node>: they are the only possible sources, port
// groups hold the zone's own ports) and, only while some object needs
// them (remotePods), every other pod, cut down to what a destination
// address set needs (labels, the pod-networks annotation, node, phase,
// deletion): destination address sets on networks with IPs hold selected
// pods cluster-wide, as ovnkube's zone controllers do. remote is nil for
// the central controller, whose pods informer holds every pod.
type informerSet struct {
	factory    informers.SharedInformerFactory
	pods       cache.SharedIndexInformer
	remote     *remotePods
	namespaces cache.SharedIndexInformer
	nqos       cache.SharedIndexInformer
	nads       cache.SharedIndexInformer
	cudns      cache.SharedIndexInformer
}

func newInformerSet(kube kubernetes.Interface, dyn dynamic.Interface, node string) (*informerSet, error) {
	if err := requireResource(kube.Discovery(), v1alpha1.GroupVersionResource()); err != nil {
		return nil, err
	}
	if err := requireResource(kube.Discovery(), nadv1.GroupVersionResource()); err != nil {
		return nil, err
	}
	s := &informerSet{factory: informers.NewSharedInformerFactory(listThenWatch{kube}, 0)}
	s.namespaces = s.factory.Core().V1().Namespaces().Informer()
	if node == "" {
		s.pods = s.factory.Core().V1().Pods().Informer()
	} else {
		s.pods = podInformer(kube, fields.OneTermEqualSelector(podNodeField, node))
		s.remote = newRemotePods(kube, node)
	}
	if err := s.pods.SetTransform(stripPod); err != nil {
		return nil, fmt.Errorf("controller: pod informer: %w", err)
	}
	var err error
	if s.nqos, err = typedInformer(dyn, v1alpha1.GroupVersionResource(), convertTo[v1alpha1.NetworkQoS], cache.Indexers{
		cache.NamespaceIndex: cache.MetaNamespaceIndexFunc,
		destSelectorIndex:    indexDestSelector,
	}); err != nil {
		return nil, err
	}
	if s.nads, err = typedInformer(dyn, nadv1.GroupVersionResource(), convertTo[nadv1.NetworkAttachmentDefinition], cache.Indexers{}); err != nil {
		return nil, err
	}
	if requireResource(kube.Discovery(), udnv1.GroupVersionResource()) == nil {
		if s.cudns, err = typedInformer(dyn, udnv1.GroupVersionResource(), convertTo[udnv1.ClusterUserDefinedNetwork], cache.Indexers{}); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// podNodeField is the pod field a zone controller's informers select on.
const podNodeField = "spec.nodeName"

// podInformer watches the pods sel selects, indexed by namespace.
func podInformer(kube kubernetes.Interface, sel fields.Selector) cache.SharedIndexInformer {
	return coreinformers.NewFilteredPodInformer(listThenWatch{kube}, metav1.NamespaceAll, 0,
		cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc},
		func(o *metav1.ListOptions) { o.FieldSelector = sel.String() })
}

// requireResource fails when the API server does not serve gvr.
func requireResource(d discovery.DiscoveryInterface, gvr schema.GroupVersionResource) error {
	list, err := d.ServerResourcesForGroupVersion(gvr.GroupVersion().String())
	if err != nil {
		if apierrors.IsNotFound(err) {
			return fmt.Errorf("controller: %s is not served (CRD not installed)", gvr)
		}
		return fmt.Errorf("controller: discover %s: %w", gvr, err)
	}
	for _, r := range list.APIResources {
		if r.Name == gvr.Resource {
			return nil
		}
	}
	return fmt.Errorf("controller: %s is not served (CRD not installed)", gvr)
}

func typedInformer(dyn dynamic.Interface, gvr schema.GroupVersionResource, conv cache.TransformFunc, idx cache.Indexers) (cache.SharedIndexInformer, error) {
	res := dyn.Resource(gvr)
	lw := &cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
			return res.List(ctx, o)
		},
		WatchFuncWithContext: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
			return res.Watch(ctx, o)
		},
	}
	inf := cache.NewSharedIndexInformer(listThenWatchLW{lw}, &unstructured.Unstructured{}, 0, idx)
	if err := inf.SetTransform(conv); err != nil {
		return nil, fmt.Errorf("controller: %s informer: %w", gvr.Resource, err)
	}
	return inf, nil
}

// listThenWatch is a clientset whose informers list, then watch, rather
// than stream the initial state in a watch (client-go's WatchList): the
// API server ends that stream with a bookmark sent on its bookmark timer,
// about a second after the last object, and every informer's sync (so
// the controller's start) would wait for it.
type listThenWatch struct{ kubernetes.Interface }

// IsWatchListSemanticsUnSupported turns WatchList off for the informers.
func (listThenWatch) IsWatchListSemanticsUnSupported() bool { return true }

// listThenWatchLW is a ListWatch with WatchList off, as listThenWatch.
type listThenWatchLW struct{ *cache.ListWatch }

// IsWatchListSemanticsUnSupported turns WatchList off for the reflector.
func (listThenWatchLW) IsWatchListSemanticsUnSupported() bool { return true }

// convertTo converts an unstructured object into *T, dropping managed
// fields; already converted objects pass through.
func convertTo[T any](obj any) (any, error) {
	u, ok := obj.(*unstructured.Unstructured)
	if !ok {
		return obj, nil
	}
	u.SetManagedFields(nil)
	out := new(T)
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, out); err != nil {
		return nil, fmt.Errorf("convert %s %s/%s: %w", u.GetKind(), u.GetNamespace(), u.GetName(), err)
	}
	return out, nil
}

// stripPod drops what the controller never reads, to keep the cache small.
func stripPod(obj any) (any, error) {
	if p, ok := obj.(*corev1.Pod); ok {
		p.ManagedFields = nil
		p.Status = corev1.PodStatus{Phase: p.Status.Phase, PodIPs: p.Status.PodIPs}
	}
	return obj, nil
}

// stripRemotePod keeps of another node's pod what a destination address
// set and the eligibility check read.
func stripRemotePod(obj any) (any, error) {
	p, ok := obj.(*corev1.Pod)
	if !ok {
		return obj, nil
	}
	out := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: p.Name, Namespace: p.Namespace, UID: p.UID, ResourceVersion: p.ResourceVersion,
			Labels: p.Labels, DeletionTimestamp: p.DeletionTimestamp},
		Spec:   corev1.PodSpec{NodeName: p.Spec.NodeName, HostNetwork: p.Spec.HostNetwork},
		Status: corev1.PodStatus{Phase: p.Status.Phase},
	}
	if v, ok := p.Annotations[podNetworksAnnotation]; ok {
		out.Annotations = map[string]string{podNetworksAnnotation: v}
	}
	return out, nil
}

func indexDestSelector(obj any) ([]string, error) {
	nq, ok := obj.(*v1alpha1.NetworkQoS)
	if !ok || !hasDestSelector(nq) {
		return nil, nil
	}
	return []string{"yes"}, nil
}

func hasDestSelector(nq *v1alpha1.NetworkQoS) bool {
	for _, r := range nq.Spec.Egress {
		if r.Classifier == nil {
			continue
		}
		for _, d := range r.Classifier.To {
			if d.PodSelector != nil || d.NamespaceSelector != nil {
				return true
			}
		}
	}
	return false
}

func (s *informerSet) all() []cache.SharedIndexInformer {
	out := []cache.SharedIndexInformer{s.pods, s.namespaces, s.nqos, s.nads}
	if s.cudns != nil {
		out = append(out, s.cudns)
	}
	return out
}

// start runs every informer until ctx ends and waits for their caches;
// the informer of other nodes' pods starts later, when an object needs it.
func (s *informerSet) start(ctx context.Context) error {
	s.factory.Start(ctx.Done()) // starts the informers it made
	if s.remote != nil {
		s.remote.begin(ctx)
	}
	var synced []cache.InformerSynced
	for _, inf := range s.all() {
		synced = append(synced, inf.HasSynced)
		if inf == s.namespaces || (inf == s.pods && s.remote == nil) {
			continue
		}
		go inf.RunWithContext(ctx)
	}
	if !cache.WaitForCacheSync(ctx.Done(), synced...) {
		return errors.New("controller: informer caches did not sync before shutdown")
	}
	return nil
}

// podsInNamespace lists the cached pods of namespace: this node's and,
// for a zone controller while its informer of them runs, the other
// nodes' (cut down).
func (s *informerSet) podsInNamespace(namespace string) ([]any, error) {
	objs, err := s.pods.GetIndexer().ByIndex(cache.NamespaceIndex, namespace)
	if err != nil || s.remote == nil {
		return objs, err
	}
	idx := s.remote.indexer()
	if idx == nil {
		return objs, nil
	}
	remote, err := idx.ByIndex(cache.NamespaceIndex, namespace)
	return append(objs, remote...), err
}

// networkQoS returns the cached object for key "ns/name".
func (s *informerSet) networkQoS(key string) (*v1alpha1.NetworkQoS, bool) {
	obj, ok, err := s.nqos.GetIndexer().GetByKey(key)
	if err != nil || !ok {
		return nil, false
	}
	nq, ok := obj.(*v1alpha1.NetworkQoS)
	return nq, ok
}

// networkQoSKeys lists every cached NetworkQoS key, sorted.
func (s *informerSet) networkQoSKeys() []string {
	keys := s.nqos.GetIndexer().ListKeys()
	sort.Strings(keys)
	return keys
}
