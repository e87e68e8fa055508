package inspect

import (
	"context"
	"flag"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	nadv1 "github.com/nqos/nqos/api/nad/v1"
	udnv1 "github.com/nqos/nqos/api/udn/v1"
	"github.com/nqos/nqos/api/v1alpha1"
	"github.com/nqos/nqos/internal/intent"
)

// ClusterSource reads a set from a live cluster, with kubectl's flags.
type ClusterSource struct {
	Kubeconfig, Context string
	// Namespace limits the NetworkQoS objects and VMs read ("" with All:
	// every namespace; "" without All: the context's namespace).
	Namespace string
	All       bool
}

func (c *ClusterSource) register(fs *flag.FlagSet) {
	fs.StringVar(&c.Kubeconfig, "kubeconfig", "", "kubeconfig of a live cluster to read the set from (default: $KUBECONFIG, ~/.kube/config)")
	fs.StringVar(&c.Context, "context", "", "kubeconfig context (default: the current context)")
	fs.StringVar(&c.Namespace, "n", "", "namespace of the NetworkQoS objects and VMs read (default: the context's)")
	fs.StringVar(&c.Namespace, "namespace", "", "the same as -n")
	fs.BoolVar(&c.All, "A", false, "read every namespace")
	fs.BoolVar(&c.All, "all-namespaces", false, "the same as -A")
}

// asked reports whether any cluster flag was given.
func (c *ClusterSource) asked() bool {
	return c.Kubeconfig != "" || c.Context != "" || c.Namespace != "" || c.All
}

func (c *ClusterSource) String() string {
	s := "cluster"
	if c.Context != "" {
		s += " " + c.Context
	}
	if c.Kubeconfig != "" {
		s += " (" + c.Kubeconfig + ")"
	}
	return s
}

// config is the REST config and the namespace the flags select.
func (c *ClusterSource) config() (*rest.Config, string, error) {
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	if c.Kubeconfig != "" {
		rules.ExplicitPath = c.Kubeconfig
	}
	cc := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, &clientcmd.ConfigOverrides{CurrentContext: c.Context})
	cfg, err := cc.ClientConfig()
	if err != nil {
		return nil, "", fmt.Errorf("%s: %w", c, err)
	}
	ns := c.Namespace
	if ns == "" && !c.All {
		if ns, _, err = cc.Namespace(); err != nil {
			return nil, "", fmt.Errorf("%s: namespace: %w", c, err)
		}
	}
	return cfg, ns, nil
}

// Resources the set is read from; optional ones may not be served.
func gvr(group, version, resource string) schema.GroupVersionResource {
	return schema.GroupVersionResource{Group: group, Version: version, Resource: resource}
}

type resource struct {
	gvr        schema.GroupVersionResource
	namespaced bool // limited to the selected namespace
	optional   bool // a cluster may not serve it
}

func resources() []resource {
	return []resource{
		{gvr: gvr("", "v1", "namespaces")},
		{gvr: nadv1.GroupVersionResource()},
		{gvr: udnv1.GroupVersionResource(), optional: true},
		{gvr: gvr("nmstate.io", "v1", "nodenetworkconfigurationpolicies"), optional: true},
		{gvr: v1alpha1.GroupVersionResource(), namespaced: true},
		{gvr: gvr("kubevirt.io", "v1", "virtualmachines"), namespaced: true, optional: true},
	}
}

// Load reads the cluster's objects and builds its fabric view's input.
// Every read is a get or list: the role docs/kubectl-nqos.md describes.
func (c *ClusterSource) Load(ctx context.Context) (*intent.Cluster, error) {
	dc, ns, err := c.dynamic()
	if err != nil {
		return nil, err
	}
	live := &intent.Live{Source: c.String()}
	for _, r := range resources() {
		items, err := c.list(ctx, dc, r, ns)
		if err != nil {
			return nil, err
		}
		live.Objects = append(live.Objects, items...)
	}
	vmis, err := c.list(ctx, dc, resource{gvr: gvr("kubevirt.io", "v1", "virtualmachineinstances"), namespaced: true, optional: true}, ns)
	if err != nil {
		return nil, err
	}
	live.VMIs = vmis
	if live.Pods, err = c.pods(ctx, dc, ns, intent.LabelKubeVirt+"="+intent.LauncherLabelValue); err != nil {
		return nil, err
	}
	return intent.FromLive(live)
}

// dynamic is a dynamic client of the cluster and the namespace the
// flags select.
func (c *ClusterSource) dynamic() (dynamic.Interface, string, error) {
	cfg, ns, err := c.config()
	if err != nil {
		return nil, "", err
	}
	dc, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return nil, "", fmt.Errorf("%s: %w", c, err)
	}
	return dc, ns, nil
}

// pods lists the pods of ns ("": every namespace), typed.
func (c *ClusterSource) pods(ctx context.Context, dc dynamic.Interface, ns string, selector ...string) ([]*corev1.Pod, error) {
	raws, err := c.list(ctx, dc, resource{gvr: gvr("", "v1", "pods"), namespaced: true}, ns, selector...)
	if err != nil {
		return nil, err
	}
	out := make([]*corev1.Pod, 0, len(raws))
	for _, raw := range raws {
		var p corev1.Pod
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(raw, &p); err != nil {
			return nil, fmt.Errorf("%s: pod: %w", c, err)
		}
		out = append(out, &p)
	}
	return out, nil
}

// list lists a resource (in ns when namespaced and ns is set). A
// resource the server does not serve is empty when optional; any other
// failure is an error, never an empty list.
func (c *ClusterSource) list(ctx context.Context, dc dynamic.Interface, r resource, ns string, selector ...string) ([]map[string]any, error) {
	var ri dynamic.ResourceInterface = dc.Resource(r.gvr)
	if r.namespaced && ns != "" {
		ri = dc.Resource(r.gvr).Namespace(ns)
	}
	opts := metav1.ListOptions{}
	if len(selector) > 0 {
		opts.LabelSelector = selector[0]
	}
	list, err := ri.List(ctx, opts)
	switch {
	case err != nil && r.optional && apierrors.IsNotFound(err):
		return nil, nil
	case err != nil:
		return nil, fmt.Errorf("%s: list %s: %w", c, r.gvr.Resource, err)
	}
	out := make([]map[string]any, 0, len(list.Items))
	for _, it := range list.Items {
		obj := it.Object
		if obj["apiVersion"] == nil {
			obj["apiVersion"] = r.gvr.GroupVersion().String()
		}
		out = append(out, obj)
	}
	return out, nil
}
