package localnetenv

import (
	"context"
	"fmt"
	"sort"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/nqos/nqos/harness"
	"github.com/nqos/nqos/kubevirt"
	"github.com/nqos/nqos/scenarios/manifests"
)

var _ harness.Scheduling = (*testbedEnv)(nil)

// ClusterNodes are the testbed's nodes as the API server serves their
// Node objects (name and labels), in node order.
func (e *testbedEnv) ClusterNodes(ctx context.Context) ([]manifests.Node, error) {
	var out []manifests.Node
	for _, n := range e.tb.Nodes() {
		obj, err := e.kube.CoreV1().Nodes().Get(ctx, n.Name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return nil, fmt.Errorf("node %s: no Node object in the API server", n.Name)
		}
		if err != nil {
			return nil, fmt.Errorf("node %s: %w", n.Name, err)
		}
		out = append(out, manifests.Node{Name: obj.Name, Labels: obj.Labels})
	}
	return out, nil
}

// LauncherPods names the launcher pods of a VM (label vm.kubevirt.io/name).
func (e *testbedEnv) LauncherPods(ctx context.Context, namespace, vm string) ([]string, error) {
	pods, err := e.kube.CoreV1().Pods(namespace).List(ctx, metav1.ListOptions{LabelSelector: kubevirt.LabelVMName + "=" + vm})
	if err != nil {
		return nil, err
	}
	var out []string
	for _, p := range pods.Items {
		out = append(out, p.Name)
	}
	sort.Strings(out)
	return out, nil
}
