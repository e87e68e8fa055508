package controller

import (
	"errors"
	"fmt"
	"maps"
	"reflect"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/tools/cache"

	nadv1 "github.com/nqos/nqos/api/nad/v1"
	"github.com/nqos/nqos/api/v1alpha1"
)

// podNetworksAnnotation is OVN-Kubernetes' per-pod network status; its
// content (not an IP count) feeds destination address sets.
const podNetworksAnnotation = "k8s.ovn.org/pod-networks"

// addHandlers maps every informer event to the NetworkQoS keys it
// affects. Before the caches synced, events are dropped: startup enqueues
// every object anyway. An informer that refuses a handler (it stopped
// already) fails the controller's construction.
func (s *informerSet) addHandlers(c *Controller) error {
	var errs []error
	add := func(what string, inf cache.SharedIndexInformer, h cache.ResourceEventHandler) {
		if _, err := inf.AddEventHandler(h); err != nil {
			errs = append(errs, fmt.Errorf("controller: %s informer: add handler: %w", what, err))
		}
	}
	add("NetworkQoS", s.nqos, cache.ResourceEventHandlerFuncs{
		AddFunc: func(obj any) { c.enqueueObject(obj) },
		UpdateFunc: func(oldObj, newObj any) {
			o, n := oldObj.(*v1alpha1.NetworkQoS), newObj.(*v1alpha1.NetworkQoS)
			if o.Generation != n.Generation || !reflect.DeepEqual(o.Spec, n.Spec) {
				c.enqueueObject(newObj)
			}
		},
		DeleteFunc: func(obj any) { c.enqueueObject(obj) },
	})
	add("pod", s.pods, cache.ResourceEventHandlerFuncs{
		AddFunc: func(obj any) { c.enqueuePod(nil, asPod(obj)) },
		UpdateFunc: func(oldObj, newObj any) {
			o, n := asPod(oldObj), asPod(newObj)
			if podChanged(o, n) {
				c.enqueuePod(o, n)
			}
		},
		DeleteFunc: func(obj any) { c.enqueuePod(nil, asPod(obj)) },
	})
	if s.remote != nil {
		// Another node's pod can only be a destination. The informer
		// starts when an object needs it; its initial list is covered by
		// the queueing of the waiting objects once its cache synced.
		s.remote.handler = cache.ResourceEventHandlerFuncs{
			AddFunc: func(obj any) { c.enqueueDestinations(asPod(obj)) },
			UpdateFunc: func(oldObj, newObj any) {
				if o, n := asPod(oldObj), asPod(newObj); podChanged(o, n) {
					c.enqueueDestinations(n)
				}
			},
			DeleteFunc: func(obj any) { c.enqueueDestinations(asPod(obj)) },
		}
		s.remote.synced = func(keys []string) {
			for _, k := range keys {
				c.queue.Add(k)
			}
		}
		s.remote.running = c.metrics.remotePodsRunning
	}
	add("namespace", s.namespaces, cache.ResourceEventHandlerFuncs{
		AddFunc: func(any) { c.enqueueAll() },
		UpdateFunc: func(oldObj, newObj any) {
			if !maps.Equal(metaOf(oldObj).GetLabels(), metaOf(newObj).GetLabels()) {
				c.enqueueAll()
			}
		},
		DeleteFunc: func(any) { c.enqueueAll() },
	})
	networks := cache.ResourceEventHandlerFuncs{
		AddFunc: func(any) { c.enqueueAll() },
		UpdateFunc: func(oldObj, newObj any) {
			if networkChanged(oldObj, newObj) {
				c.enqueueAll()
			}
		},
		DeleteFunc: func(any) { c.enqueueAll() },
	}
	add("NetworkAttachmentDefinition", s.nads, networks)
	if s.cudns != nil {
		add("ClusterUserDefinedNetwork", s.cudns, networks)
	}
	return errors.Join(errs...)
}

func (c *Controller) enqueueObject(obj any) {
	if !c.live.Load() {
		return
	}
	key, err := cache.DeletionHandlingMetaNamespaceKeyFunc(obj)
	if err == nil {
		c.queue.Add(key)
	}
}

func (c *Controller) enqueueAll() {
	if !c.live.Load() {
		return
	}
	for _, key := range c.inf.networkQoSKeys() {
		c.queue.Add(key)
	}
}

// enqueuePod queues the objects whose source selector matches the pod in
// either version (same namespace only), and every object with a
// destination selector (its address sets may hold the pod's IPs).
func (c *Controller) enqueuePod(old, cur *corev1.Pod) {
	if !c.live.Load() || cur == nil {
		return
	}
	idx := c.inf.nqos.GetIndexer()
	same, _ := idx.ByIndex(cache.NamespaceIndex, cur.Namespace)
	for _, obj := range same {
		nq := obj.(*v1alpha1.NetworkQoS)
		if selects(nq.Spec.PodSelector, cur) || (old != nil && selects(nq.Spec.PodSelector, old)) {
			c.enqueueObject(nq)
		}
	}
	c.enqueueDestinations(cur)
}

// enqueueDestinations queues every object with a destination selector:
// its address sets may hold the pod's IPs.
func (c *Controller) enqueueDestinations(pod *corev1.Pod) {
	if !c.live.Load() || pod == nil {
		return
	}
	dest, _ := c.inf.nqos.GetIndexer().ByIndex(destSelectorIndex, "yes")
	for _, obj := range dest {
		c.enqueueObject(obj)
	}
}

// selects reports whether sel matches the pod; an unparsable selector
// matches (the reconcile reports the error on the object).
func selects(sel metav1.LabelSelector, pod *corev1.Pod) bool {
	s, err := metav1.LabelSelectorAsSelector(&sel)
	return err != nil || s.Matches(labels.Set(pod.Labels))
}

// podChanged is the relevance filter: labels, attachments, network status
// content, node, phase and deletion. It never compares IP counts.
func podChanged(o, n *corev1.Pod) bool {
	if o == nil || n == nil {
		return true
	}
	return !maps.Equal(o.Labels, n.Labels) ||
		o.Annotations[nadv1.NetworksAnnotation] != n.Annotations[nadv1.NetworksAnnotation] ||
		o.Annotations[podNetworksAnnotation] != n.Annotations[podNetworksAnnotation] ||
		o.Spec.NodeName != n.Spec.NodeName ||
		o.Status.Phase != n.Status.Phase ||
		(o.DeletionTimestamp == nil) != (n.DeletionTimestamp == nil)
}

// networkChanged reports a NAD or CUDN change that can alter networks.
func networkChanged(oldObj, newObj any) bool {
	o, n := metaOf(oldObj), metaOf(newObj)
	if o == nil || n == nil {
		return true
	}
	// Custom resources bump metadata.generation on every spec change.
	return o.GetGeneration() != n.GetGeneration() || !maps.Equal(o.GetLabels(), n.GetLabels())
}

func asPod(obj any) *corev1.Pod {
	if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = t.Obj
	}
	p, _ := obj.(*corev1.Pod)
	return p
}

func metaOf(obj any) metav1.Object {
	if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = t.Obj
	}
	m, _ := obj.(metav1.Object)
	return m
}
