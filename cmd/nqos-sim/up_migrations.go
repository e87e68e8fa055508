package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"

	"github.com/nqos/nqos/kubevirt"
	"github.com/nqos/nqos/scenarios/manifests"
	"github.com/nqos/nqos/topo/localnet"
)

// vmimResource is the VirtualMachineInstanceMigration resource the
// testbed's API server serves (config/crd/kubevirt).
var vmimResource = schema.GroupVersionResource{Group: "kubevirt.io", Version: "v1", Resource: "virtualmachineinstancemigrations"}

// upMigrations acts, in an `up` session, on the
// VirtualMachineInstanceMigrations users apply to the testbed's API
// server: each one without status.phase is decided as KubeVirt and the
// scheduler would (manifests.Decide: the VMI must run; the target is
// another node that matches the VM's nodeSelector and maps its
// localnets), migrated with the testbed's default mode and given
// status.phase Succeeded, or Failed with KubeVirt's reason. There is no
// admission webhook: a migration KubeVirt would deny is created and
// marked Failed with the webhook's message.
type upMigrations struct {
	vms   vmMigrator
	dyn   dynamic.Interface
	nodes []manifests.Node
	// placement is each started VM's placement, by "namespace/name".
	placement map[string]manifests.Placement
}

// vmMigrator is what the watcher needs of the VMs' manager.
type vmMigrator interface {
	Get(namespace, name string) (kubevirt.Instance, error)
	Migrate(ctx context.Context, namespace, name, target string, opts kubevirt.MigrateOptions) (kubevirt.MigrationReport, error)
}

// newUpMigrations watches migrations of the VMs vms started.
func newUpMigrations(tb *localnet.Testbed, vms *kubevirt.Manager, placement map[string]manifests.Placement) (*upMigrations, error) {
	cfg := tb.RESTConfig()
	if cfg == nil {
		return nil, fmt.Errorf("testbed %s has no Kubernetes API", tb.Spec().RunID)
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	var names []string
	for _, n := range tb.Nodes() {
		names = append(names, n.Name)
	}
	return &upMigrations{vms: vms, dyn: dyn, nodes: manifests.DefaultNodes(names), placement: placement}, nil
}

// run polls the migrations every 500 ms until ctx ends.
func (u *upMigrations) run(ctx context.Context) {
	tick := time.NewTicker(500 * time.Millisecond)
	defer tick.Stop()
	for ctx.Err() == nil {
		u.poll(ctx)
		select {
		case <-ctx.Done():
		case <-tick.C:
		}
	}
}

// poll handles every migration without a status.phase; a failed read
// is printed and retried on the next poll.
func (u *upMigrations) poll(ctx context.Context) {
	list, err := u.dyn.Resource(vmimResource).List(ctx, metav1.ListOptions{})
	if err != nil {
		if ctx.Err() == nil {
			fmt.Printf("VirtualMachineInstanceMigrations: %v\n", err)
		}
		return
	}
	for i := range list.Items {
		if phase, _, _ := unstructured.NestedString(list.Items[i].Object, "status", "phase"); phase == "" {
			u.handle(ctx, &list.Items[i])
		}
	}
}

// handle decides one new migration, runs it and writes its status.
func (u *upMigrations) handle(ctx context.Context, obj *unstructured.Unstructured) {
	o, err := manifests.NewObject("API server", 0, obj.Object)
	var mig *manifests.Migration
	if err == nil {
		mig, err = manifests.DecodeMigration(o)
	}
	if err != nil {
		u.status(ctx, obj, "Failed", err.Error(), "")
		return
	}
	key := mig.VMIKey()
	vmi := manifests.VMIState{}
	if in, err := u.vms.Get(mig.Namespace, mig.VMI); err == nil {
		vmi = manifests.VMIState{Running: true, Node: in.Node}
	}
	target, refusal := manifests.Decide(mig, u.placement[key], vmi, u.nodes, u.load())
	if refusal != nil {
		fmt.Printf("%s: refused: %s\n", o.Ref(), refusal.Error())
		u.status(ctx, obj, "Failed", refusal.Error(), "")
		return
	}
	fmt.Printf("%s: migrating VMI %s from %s to %s (%s)\n", o.Ref(), key, vmi.Node, target, kubevirt.MigratePerPodLSP)
	if !u.status(ctx, obj, "Running", "", target) {
		return
	}
	rep, err := u.vms.Migrate(ctx, mig.Namespace, mig.VMI, target, kubevirt.MigrateOptions{Mode: kubevirt.MigratePerPodLSP})
	if err != nil {
		fmt.Printf("%s: failed: %v\n", o.Ref(), err)
		u.status(ctx, obj, "Failed", err.Error(), target)
		return
	}
	fmt.Printf("%s: succeeded in %v (target pod %s)\n", o.Ref(), rep.Done.Round(time.Millisecond), rep.TargetPod)
	u.status(ctx, obj, "Succeeded", "", target)
}

// load counts the started VMs per node.
func (u *upMigrations) load() map[string]int {
	out := map[string]int{}
	for key := range u.placement {
		ns, name, _ := strings.Cut(key, "/")
		if in, err := u.vms.Get(ns, name); err == nil {
			out[in.Node]++
		}
	}
	return out
}

// status merges status.phase (and the failure reason or target node)
// into the object; false when the write failed (printed).
func (u *upMigrations) status(ctx context.Context, obj *unstructured.Unstructured, phase, reason, target string) bool {
	state := map[string]any{}
	if target != "" {
		state["targetNode"] = target
	}
	if reason != "" {
		state["failed"], state["failureReason"] = true, reason
	}
	patch, err := json.Marshal(map[string]any{"status": map[string]any{"phase": phase, "migrationState": state}})
	if err == nil {
		_, err = u.dyn.Resource(vmimResource).Namespace(obj.GetNamespace()).Patch(ctx, obj.GetName(), types.MergePatchType, patch, metav1.PatchOptions{})
	}
	if err != nil {
		fmt.Printf("VirtualMachineInstanceMigration %s/%s: status %s: %v\n", obj.GetNamespace(), obj.GetName(), phase, err)
		return false
	}
	return true
}
