package deploy

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/restmapper"
	"k8s.io/client-go/tools/clientcmd"
)

// fieldManager owns every field nqos-kind applies (server-side apply).
const fieldManager = "nqos-kind"

// kube is the cluster's API, reached with the kubeconfig kind wrote.
type kube struct {
	cs     kubernetes.Interface
	dyn    dynamic.Interface
	mapper meta.RESTMapper
}

func newKube(kubeconfig string) (*kube, error) {
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return nil, fmt.Errorf("kubeconfig %s: %w", kubeconfig, err)
	}
	cfg.UserAgent = fieldManager
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("client for %s: %w", cfg.Host, err)
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("dynamic client for %s: %w", cfg.Host, err)
	}
	mapper := restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(cs.Discovery()))
	return &kube{cs: cs, dyn: dyn, mapper: mapper}, nil
}

// ref names an object in errors and in the report: Kind ns/name.
func ref(u *unstructured.Unstructured) string {
	if u.GetNamespace() == "" {
		return u.GetKind() + " " + u.GetName()
	}
	return u.GetKind() + " " + u.GetNamespace() + "/" + u.GetName()
}

func (k *kube) resource(u *unstructured.Unstructured) (dynamic.ResourceInterface, error) {
	gvk := u.GroupVersionKind()
	m, err := k.mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	if err != nil {
		return nil, fmt.Errorf("%s: resource of %s: %w", ref(u), gvk, err)
	}
	if m.Scope.Name() == meta.RESTScopeNameNamespace {
		return k.dyn.Resource(m.Resource).Namespace(u.GetNamespace()), nil
	}
	return k.dyn.Resource(m.Resource), nil
}

// apply server-side applies u and says whether it was created, updated
// or left unchanged.
func (k *kube) apply(ctx context.Context, u *unstructured.Unstructured) (string, error) {
	r, err := k.resource(u)
	if err != nil {
		return "", err
	}
	before := ""
	switch old, err := r.Get(ctx, u.GetName(), metav1.GetOptions{}); {
	case err == nil:
		before = old.GetResourceVersion()
	case !apierrors.IsNotFound(err):
		return "", fmt.Errorf("get %s: %w", ref(u), err)
	}
	got, err := r.Apply(ctx, u.GetName(), u, metav1.ApplyOptions{FieldManager: fieldManager, Force: true})
	if err != nil {
		return "", fmt.Errorf("apply %s: %w", ref(u), err)
	}
	switch {
	case before == "":
		return "created", nil
	case got.GetResourceVersion() == before:
		return "unchanged", nil
	default:
		return "updated", nil
	}
}

// del deletes u; an object already gone is no error.
func (k *kube) del(ctx context.Context, u *unstructured.Unstructured) (string, error) {
	r, err := k.resource(u)
	if err != nil {
		return "", err
	}
	policy := metav1.DeletePropagationForeground
	switch err := r.Delete(ctx, u.GetName(), metav1.DeleteOptions{PropagationPolicy: &policy}); {
	case apierrors.IsNotFound(err):
		return "absent", nil
	case err != nil:
		return "", fmt.Errorf("delete %s: %w", ref(u), err)
	}
	return "deleted", nil
}

// toUnstructured converts a typed object for apply, without the fields a
// typed zero value carries but an apply configuration must not.
func toUnstructured(obj runtime.Object, apiVersion, kind string) (*unstructured.Unstructured, error) {
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		return nil, fmt.Errorf("convert %s: %w", kind, err)
	}
	u := &unstructured.Unstructured{Object: m}
	u.SetAPIVersion(apiVersion)
	u.SetKind(kind)
	unstructured.RemoveNestedField(u.Object, "status")
	unstructured.RemoveNestedField(u.Object, "metadata", "creationTimestamp")
	unstructured.RemoveNestedField(u.Object, "spec", "template", "metadata", "creationTimestamp")
	return u, nil
}

// applyTyped applies a typed object converted as toUnstructured does; it
// returns what apply did and the object's reference.
func (k *kube) applyTyped(ctx context.Context, obj runtime.Object, apiVersion, kind string) (what, name string, err error) {
	u, err := toUnstructured(obj, apiVersion, kind)
	if err != nil {
		return "", "", err
	}
	what, err = k.apply(ctx, u)
	if err != nil {
		return "", "", err
	}
	return what, ref(u), nil
}
