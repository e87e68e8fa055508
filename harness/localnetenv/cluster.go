package localnetenv

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"

	nadv1 "github.com/nqos/nqos/api/nad/v1"
	udnv1 "github.com/nqos/nqos/api/udn/v1"
	"github.com/nqos/nqos/api/v1alpha1"
	"github.com/nqos/nqos/internal/qos"
	"github.com/nqos/nqos/kubevirt"
	"github.com/nqos/nqos/scenarios"
	"github.com/nqos/nqos/scenarios/manifests"
	"github.com/nqos/nqos/topo/localnet"
)

// resourceOf maps a scenario kind to its API resource.
func resourceOf(kind string) (schema.GroupVersionResource, bool) {
	gvr, ok := map[string]schema.GroupVersionResource{
		v1alpha1.Kind:           {Group: v1alpha1.GroupName, Version: v1alpha1.Version, Resource: v1alpha1.Resource},
		nadv1.Kind:              {Group: nadv1.GroupName, Version: nadv1.Version, Resource: nadv1.Resource},
		udnv1.Kind:              {Group: udnv1.GroupName, Version: udnv1.Version, Resource: udnv1.Resource},
		"Namespace":             {Version: "v1", Resource: "namespaces"},
		manifests.MigrationKind: {Group: "kubevirt.io", Version: "v1", Resource: "virtualmachineinstancemigrations"},
	}[kind]
	return gvr, ok
}

func (e *testbedEnv) resource(m *scenarios.Manifest) (dynamic.ResourceInterface, error) {
	gvr, ok := resourceOf(m.Kind)
	if !ok {
		return nil, fmt.Errorf("%s: kind %s has no resource mapping", m.Key(), m.Kind)
	}
	if m.Namespace == "" {
		return e.dyn.Resource(gvr), nil
	}
	return e.dyn.Resource(gvr).Namespace(m.Namespace), nil
}

// Apply creates or updates the object with server-side apply; fields the
// revision no longer sets are removed (the manager owns them).
func (e *testbedEnv) Apply(ctx context.Context, m *scenarios.Manifest) error {
	ri, err := e.resource(m)
	if err != nil {
		return err
	}
	obj := &unstructured.Unstructured{Object: m.Object}
	_, err = ri.Apply(ctx, m.Name, obj, metav1.ApplyOptions{FieldManager: localnet.FieldManager, Force: true})
	return err
}

// Delete deletes the object and waits until the API no longer has it.
func (e *testbedEnv) Delete(ctx context.Context, m *scenarios.Manifest) error {
	ri, err := e.resource(m)
	if err != nil {
		return err
	}
	if err := ri.Delete(ctx, m.Name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
		return err
	}
	return localnet.Poll(ctx, 30*time.Second, m.Key()+" deleted", func(ctx context.Context) (bool, error) {
		_, err := ri.Get(ctx, m.Name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return true, nil
		}
		return false, err
	})
}

// Conditions reads status.conditions of a NetworkQoS.
func (e *testbedEnv) Conditions(ctx context.Context, namespace, name string) ([]qos.Condition, error) {
	u, found, err := e.networkQoS(ctx, namespace, name)
	if !found {
		return nil, err
	}
	var conds []qos.Condition
	if err := decodeConditions(u, &conds); err != nil {
		return nil, err
	}
	return conds, nil
}

// networkQoS reads a NetworkQoS object; found is false for a missing
// one (no error) and when the read failed.
func (e *testbedEnv) networkQoS(ctx context.Context, namespace, name string) (u *unstructured.Unstructured, found bool, err error) {
	gvr, _ := resourceOf(v1alpha1.Kind)
	u, err = e.dyn.Resource(gvr).Namespace(namespace).Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil, false, nil
	}
	return u, err == nil, err
}

// decodeConditions decodes the object's status.conditions into conds.
func decodeConditions(u *unstructured.Unstructured, conds any) error {
	raw, _, err := unstructured.NestedSlice(u.Object, "status", "conditions")
	if err == nil {
		err = remarshal(raw, conds)
	}
	if err != nil {
		return fmt.Errorf("NetworkQoS %s/%s: status.conditions: %w", u.GetNamespace(), u.GetName(), err)
	}
	return nil
}

func remarshal(in, out any) error {
	b, err := json.Marshal(in)
	if err != nil {
		return err
	}
	return json.Unmarshal(b, out)
}

// SetLabels merge-patches the labels of the VM's launcher pod.
func (e *testbedEnv) SetLabels(ctx context.Context, vm *scenarios.VM, set map[string]string, remove []string) error {
	in, err := e.vms.Get(vm.Namespace, vm.Name)
	if err != nil {
		return err
	}
	labels := map[string]any{}
	for k, v := range set {
		labels[k] = v
	}
	for _, k := range remove {
		labels[k] = nil
	}
	patch, err := json.Marshal(map[string]any{"metadata": map[string]any{"labels": labels}})
	if err != nil {
		return err
	}
	_, err = e.kube.CoreV1().Pods(vm.Namespace).Patch(ctx, in.Pod, types.MergePatchType, patch, metav1.PatchOptions{})
	return err
}

// Ports are the LSPs of the VM's NICs, in NIC order.
func (e *testbedEnv) Ports(vm *scenarios.VM) ([]string, error) {
	in, err := e.vms.Get(vm.Namespace, vm.Name)
	if err != nil {
		return nil, err
	}
	return slices.Clone(in.LSPs), nil
}

// PortName is the LSP of the VM's first NIC.
func (e *testbedEnv) PortName(vm *scenarios.VM) (string, error) {
	in, err := e.vms.Get(vm.Namespace, vm.Name)
	if err != nil {
		return "", err
	}
	if len(in.LSPs) == 0 {
		return "", fmt.Errorf("VM %s/%s has no port", vm.Namespace, vm.Name)
	}
	return in.LSPs[0], nil // the first NIC's
}

// RunVM creates a late VM with its LSP (kubevirt writes the launcher pod
// first) and returns without waiting for the port to be bound up.
func (e *testbedEnv) RunVM(ctx context.Context, vm *scenarios.VM) error {
	if err := e.vms.Create(ctx, e.kubevirtVM(vm), kubevirt.CreateOptions{NoWait: true}); err != nil {
		return fmt.Errorf("create VM %s: %w", vm.Name, err)
	}
	return nil
}

// StopVM deletes the VM's launcher pod, then its LSP, then its guest.
func (e *testbedEnv) StopVM(ctx context.Context, vm *scenarios.VM) error {
	if err := e.vms.Delete(ctx, vm.Namespace, vm.Name); err != nil {
		return fmt.Errorf("delete VM %s: %w", vm.Name, err)
	}
	return nil
}
