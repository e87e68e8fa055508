package localnet

import (
	"context"
	"fmt"
	"maps"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"

	nadv1 "github.com/nqos/nqos/api/nad/v1"
	udnv1 "github.com/nqos/nqos/api/udn/v1"
	"github.com/nqos/nqos/internal/poll"
)

// createNetworkObjects creates each network's namespaces, CUDN and NADs
// in the API, as the cluster would hold them.
func (t *Testbed) createNetworkObjects(ctx context.Context) error {
	cfg := t.RESTConfig()
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return fmt.Errorf("testbed %s: kube client: %w", t.st.RunID, err)
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return fmt.Errorf("testbed %s: kube client: %w", t.st.RunID, err)
	}
	for _, n := range t.st.Spec.Networks {
		if err := t.createNetworkObject(ctx, cs, dyn, n); err != nil {
			return fmt.Errorf("testbed %s: network %s: %w", t.st.RunID, n.Name, err)
		}
	}
	return t.createNodeObjects(ctx, cs)
}

// createNodeObjects registers every testbed node as a Kubernetes Node
// (name and kubernetes.io/hostname label, as a kubelet registers it,
// plus the node's labels from the spec), so
// node-aware components (the status aggregator: every node is a zone)
// see the cluster's nodes. No kubelet runs: the Nodes have no status.
func (t *Testbed) createNodeObjects(ctx context.Context, cs kubernetes.Interface) error {
	for _, n := range t.st.Nodes {
		labels := maps.Clone(t.st.Spec.NodeLabels[n.Name])
		if labels == nil {
			labels = map[string]string{}
		}
		labels["kubernetes.io/hostname"] = n.Name
		obj := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: n.Name, Labels: labels}}
		if _, err := cs.CoreV1().Nodes().Create(ctx, obj, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("testbed %s: node %s: %w", t.st.RunID, n.Name, err)
		}
	}
	return nil
}

func (t *Testbed) createNetworkObject(ctx context.Context, cs kubernetes.Interface, dyn dynamic.Interface, n Network) error {
	var owner *metav1.OwnerReference
	if n.CUDN != nil {
		u, err := createObject(ctx, dyn.Resource(udnv1.GroupVersionResource()), n.CUDN)
		if err != nil {
			return fmt.Errorf("ClusterUserDefinedNetwork %s: %w", n.CUDN.Name, err)
		}
		owner = &metav1.OwnerReference{APIVersion: udnv1.APIVersion(), Kind: udnv1.Kind,
			Name: u.GetName(), UID: u.GetUID(), Controller: ptrTrue()}
	}
	for _, ns := range n.Namespaces {
		obj := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns.Name, Labels: ns.Labels, Annotations: ns.Annotations}}
		if _, err := cs.CoreV1().Namespaces().Create(ctx, obj, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("namespace %s: %w", ns.Name, err)
		}
	}
	for _, nad := range n.NADObjects {
		if err := EnsureNamespace(ctx, cs, nad.Namespace); err != nil {
			return err
		}
		obj := nad.DeepCopy()
		obj.TypeMeta = metav1.TypeMeta{APIVersion: nadv1.APIVersion(), Kind: nadv1.Kind}
		if owner != nil {
			obj.OwnerReferences = []metav1.OwnerReference{*owner}
		}
		if _, err := applyObject(ctx, dyn.Resource(nadv1.GroupVersionResource()).Namespace(obj.Namespace), obj); err != nil {
			return fmt.Errorf("NAD %s/%s: %w", obj.Namespace, obj.Name, err)
		}
	}
	return nil
}

// createObject creates a typed object through the dynamic client,
// retrying while a freshly installed CRD is not served yet.
func createObject(ctx context.Context, ri dynamic.ResourceInterface, obj any) (*unstructured.Unstructured, error) {
	raw, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		return nil, err
	}
	u := &unstructured.Unstructured{Object: raw}
	var got *unstructured.Unstructured
	// Until the API server serves a new CRD's resource, creates fail: those
	// errors mean "not yet".
	err = poll.Until(ctx, 20*time.Second, pollEvery, "create "+u.GetKind()+" "+u.GetName(), func(ctx context.Context) (bool, error) {
		got, err = ri.Create(ctx, u, metav1.CreateOptions{})
		if apierrors.IsAlreadyExists(err) {
			got, err = ri.Get(ctx, u.GetName(), metav1.GetOptions{})
		}
		if err != nil {
			return false, poll.Retry("%v", err)
		}
		return true, nil
	})
	return got, err
}

// FieldManager is the server-side apply field manager of the objects the
// testbed and the scenarios write (harness/localnetenv applies with it).
const FieldManager = "nqos-sim-run"

// applyObject creates or updates a typed object with server-side apply
// as FieldManager, retrying while a freshly installed CRD is not served
// yet. NADs are written so: a scenario that applies the same NAD again
// as the same manager changes nothing, not even managedFields. (A first
// apply by another manager that changes nothing adds a managedFields
// entry without a time, on which ovnkube's NAD controller panics.)
func applyObject(ctx context.Context, ri dynamic.ResourceInterface, obj any) (*unstructured.Unstructured, error) {
	raw, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		return nil, err
	}
	u := &unstructured.Unstructured{Object: raw}
	unstructured.RemoveNestedField(u.Object, "metadata", "creationTimestamp")
	var got *unstructured.Unstructured
	err = poll.Until(ctx, 20*time.Second, pollEvery, "apply "+u.GetKind()+" "+u.GetName(), func(ctx context.Context) (bool, error) {
		got, err = ri.Apply(ctx, u.GetName(), u, metav1.ApplyOptions{FieldManager: FieldManager, Force: true})
		if err != nil {
			return false, poll.Retry("%v", err)
		}
		return true, nil
	})
	return got, err
}

// EnsureNamespace creates a namespace unless it exists.
func EnsureNamespace(ctx context.Context, cs kubernetes.Interface, name string) error {
	_, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("namespace %s: %w", name, err)
	}
	return nil
}
