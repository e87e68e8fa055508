package main

import (
	"context"
	"fmt"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	dynfake "k8s.io/client-go/dynamic/fake"

	"github.com/nqos/nqos/kubevirt"
	"github.com/nqos/nqos/scenarios/manifests"
)

// fakeVMs runs VMs on nodes and records the migrations asked of it.
type fakeVMs struct {
	node     map[string]string // "ns/name" -> node
	migrated []string
}

func (f *fakeVMs) Get(ns, name string) (kubevirt.Instance, error) {
	n, ok := f.node[ns+"/"+name]
	if !ok {
		return kubevirt.Instance{}, fmt.Errorf("VM %s/%s: not running", ns, name)
	}
	return kubevirt.Instance{Node: n}, nil
}

func (f *fakeVMs) Migrate(_ context.Context, ns, name, target string, _ kubevirt.MigrateOptions) (kubevirt.MigrationReport, error) {
	f.migrated = append(f.migrated, ns+"/"+name+"->"+target)
	f.node[ns+"/"+name] = target
	return kubevirt.MigrationReport{Target: target}, nil
}

func vmim(name, vmi string) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{"apiVersion": "kubevirt.io/v1", "kind": "VirtualMachineInstanceMigration",
		"metadata": map[string]any{"name": name, "namespace": "vms"}, "spec": map[string]any{"vmiName": vmi}}}
}

// TestUpMigrations: one poll migrates the running VM to the other node
// and writes Succeeded; the pinned VM's and the absent VM's migrations
// are Failed with KubeVirt's reasons; a migration with a phase is left.
func TestUpMigrations(t *testing.T) {
	done := vmim("done", "a")
	done.Object["status"] = map[string]any{"phase": "Succeeded"}
	dyn := dynfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(),
		map[schema.GroupVersionResource]string{vmimResource: "VirtualMachineInstanceMigrationList"},
		vmim("m-a", "a"), vmim("m-pinned", "pinned"), vmim("m-gone", "gone"), done)
	vms := &fakeVMs{node: map[string]string{"vms/a": "node1", "vms/pinned": "node2"}}
	all := manifests.NodeMappings(nil, nil)
	u := &upMigrations{vms: vms, dyn: dyn, nodes: manifests.DefaultNodes([]string{"node1", "node2"}),
		placement: map[string]manifests.Placement{"vms/a": {Mappings: all},
			"vms/pinned": {Mappings: all, NodeSelector: map[string]string{manifests.LabelHostname: "node2"}}}}
	u.poll(context.Background())
	if strings.Join(vms.migrated, ",") != "vms/a->node2" {
		t.Errorf("migrated %v, want vms/a->node2 only", vms.migrated)
	}
	for name, want := range map[string][]string{
		"m-a":      {"Succeeded", "node2"},
		"m-pinned": {"Failed", "migrationTargetPodUnschedulable: Migration target pod for VMI [vms/pinned] is currently unschedulable: 0/2 nodes are available: 1 node(s) didn't match Pod's node affinity/selector, 1 node(s) didn't match pod anti-affinity rules."},
		"m-gone":   {"Failed", `AdmissionDenied: admission webhook "migration-create-validator.kubevirt.io" denied the request: the VMI "vms/gone" does not exist`},
		"done":     {"Succeeded", ""},
	} {
		got, err := dyn.Resource(vmimResource).Namespace("vms").Get(context.Background(), name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		phase, _, _ := unstructured.NestedString(got.Object, "status", "phase")
		reason, _, _ := unstructured.NestedString(got.Object, "status", "migrationState", "failureReason")
		target, _, _ := unstructured.NestedString(got.Object, "status", "migrationState", "targetNode")
		if phase != want[0] || (phase == "Failed" && reason != want[1]) || (name == "m-a" && target != want[1]) {
			t.Errorf("%s: phase %q reason %q target %q, want %v", name, phase, reason, target, want)
		}
	}
}
