package inspect

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/runtime"

	nadv1 "github.com/nqos/nqos/api/nad/v1"
	udnv1 "github.com/nqos/nqos/api/udn/v1"
	"github.com/nqos/nqos/api/v1alpha1"
	"github.com/nqos/nqos/internal/intent"
	"github.com/nqos/nqos/internal/qos"
)

// Objects is what a controller compiles, read from a live cluster: the
// compiler's input with every pod (not only the VMs' launcher pods), and
// the status conditions of each NetworkQoS by "ns/name".
type Objects struct {
	Input     qos.Input
	Status    map[string][]qos.Condition
	Namespace string // the namespace read ("" for every namespace)
}

// LoadObjects reads the compiler's input from the cluster: Namespaces,
// NADs, CUDNs, NetworkQoS objects and pods (every namespace unless -n
// names one). Every read is a get or list; a failed one is an error.
func (c *ClusterSource) LoadObjects(ctx context.Context) (*Objects, error) {
	dc, ns, err := c.dynamic()
	if err != nil {
		return nil, err
	}
	live := &intent.Live{Source: c.String()}
	out := &Objects{Status: map[string][]qos.Condition{}, Namespace: ns}
	for _, r := range []resource{
		{gvr: gvr("", "v1", "namespaces")},
		{gvr: nadv1.GroupVersionResource()},
		{gvr: udnv1.GroupVersionResource(), optional: true},
		{gvr: v1alpha1.GroupVersionResource(), namespaced: true},
	} {
		items, err := c.list(ctx, dc, r, ns)
		if err != nil {
			return nil, err
		}
		live.Objects = append(live.Objects, items...)
		if r.gvr == v1alpha1.GroupVersionResource() {
			if err := statusOf(items, out.Status); err != nil {
				return nil, fmt.Errorf("%s: %w", c, err)
			}
		}
	}
	cl, err := intent.FromLive(live)
	if err != nil {
		return nil, Invalid(fmt.Errorf("%s: %w", c, err))
	}
	out.Input = cl.Input
	if out.Input.Pods, err = c.pods(ctx, dc, ns); err != nil {
		return nil, err
	}
	return out, nil
}

// statusOf adds each NetworkQoS's status conditions to status.
func statusOf(items []map[string]any, status map[string][]qos.Condition) error {
	for _, raw := range items {
		var nq v1alpha1.NetworkQoS
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(raw, &nq); err != nil {
			return fmt.Errorf("NetworkQoS status: %w", err)
		}
		key := nq.Namespace + "/" + nq.Name
		for _, cond := range nq.Status.Conditions {
			status[key] = append(status[key], qos.Condition{Type: cond.Type, Status: string(cond.Status), Reason: cond.Reason, Message: cond.Message})
		}
	}
	return nil
}
