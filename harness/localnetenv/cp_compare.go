package localnetenv

import (
	"context"
	"fmt"
	"time"

	"github.com/nqos/nqos/internal/poll"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"

	nadv1 "github.com/nqos/nqos/api/nad/v1"
	udnv1 "github.com/nqos/nqos/api/udn/v1"
	"github.com/nqos/nqos/api/v1alpha1"
	"github.com/nqos/nqos/harness/lifeprobe"
	"github.com/nqos/nqos/harness/nbaudit"
	"github.com/nqos/nqos/internal/qos"
)

// clusterInput lists every object the compiler reads (NetworkQoS,
// Namespace, Pod, NAD, and CUDN when that API is installed) from the
// API server; node, if set, compiles for that node's zone
// (interconnect): only its pods are port-group members.
func (e *testbedEnv) clusterInput(ctx context.Context, node string) (qos.Input, error) {
	var in qos.Input
	nss, err := e.kube.CoreV1().Namespaces().List(ctx, metav1.ListOptions{})
	if err != nil {
		return in, fmt.Errorf("list namespaces: %w", err)
	}
	for i := range nss.Items {
		in.Namespaces = append(in.Namespaces, &nss.Items[i])
	}
	pods, err := e.kube.CoreV1().Pods("").List(ctx, metav1.ListOptions{})
	if err != nil {
		return in, fmt.Errorf("list pods: %w", err)
	}
	for i := range pods.Items {
		in.Pods = append(in.Pods, &pods.Items[i])
	}
	if in.NetworkQoSes, err = listTyped[v1alpha1.NetworkQoS](ctx, e.dyn, v1alpha1.GroupVersionResource(), false); err != nil {
		return in, err
	}
	if in.NADs, err = listTyped[nadv1.NetworkAttachmentDefinition](ctx, e.dyn, nadv1.GroupVersionResource(), false); err != nil {
		return in, err
	}
	if in.CUDNs, err = listTyped[udnv1.ClusterUserDefinedNetwork](ctx, e.dyn, udnv1.GroupVersionResource(), true); err != nil {
		return in, err
	}
	in.Node = node
	return in, nil
}

// listTyped lists a resource across namespaces and converts each item;
// optional resources that are not served list as empty.
func listTyped[T any](ctx context.Context, dyn dynamic.Interface, gvr schema.GroupVersionResource, optional bool) ([]*T, error) {
	l, err := dyn.Resource(gvr).List(ctx, metav1.ListOptions{})
	if err != nil {
		if optional {
			return nil, nil
		}
		return nil, fmt.Errorf("list %s: %w", gvr.Resource, err)
	}
	var out []*T
	for i := range l.Items {
		obj := new(T)
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(l.Items[i].Object, obj); err != nil {
			return nil, fmt.Errorf("%s %s/%s: %w", gvr.Resource, l.Items[i].GetNamespace(), l.Items[i].GetName(), err)
		}
		out = append(out, obj)
	}
	return out, nil
}

// convergeResult is how the Northbound reached the compiler's state.
type convergeResult struct {
	// Took is from the call until the rows matched.
	Took time.Duration `json:"tookNs"`
	// QoSRows, PortGroups and AddressSets are the counts at the end.
	QoSRows     int              `json:"qosRows"`
	PortGroups  int              `json:"portGroups"`
	AddressSets int              `json:"addressSets"`
	Diff        lifeprobe.NBDiff `json:"diff"`
	// Violations are Audit's findings at the end (duplicate ids, rows
	// off every switch, dangling references).
	Violations []nbaudit.Violation `json:"violations"`
}

// waitConverged polls until zone z's NB rows equal qos.Compile of the
// cluster's current objects for the zone and Audit is clean. On timeout
// the last difference is in the result and the error.
func (e *testbedEnv) waitConverged(ctx context.Context, z zoneNB, timeout time.Duration) (convergeResult, error) {
	start := time.Now()
	var res convergeResult
	err := poll.Until(ctx, timeout, 100*time.Millisecond, "NB rows equal to the compiler's", func(context.Context) (bool, error) {
		in, err := e.clusterInput(ctx, z.node())
		if err != nil {
			return false, err
		}
		got, err := z.nb.Rows(ctx)
		if err != nil {
			return false, err
		}
		violations, err := nbaudit.Audit(ctx, z.nb)
		if err != nil {
			return false, err
		}
		want := qos.Compile(in)
		res = convergeResult{Diff: lifeprobe.DiffRows(want, got), Violations: violations,
			QoSRows: len(got.QoS), PortGroups: len(got.PortGroups), AddressSets: len(got.AddressSets)}
		return res.Diff.Empty() && len(res.Violations) == 0, nil
	})
	res.Took = time.Since(start)
	if err != nil {
		return res, fmt.Errorf("%w: diff %s; violations %+v", err, res.Diff, res.Violations)
	}
	return res, nil
}
