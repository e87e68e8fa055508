// Package world owns the intent computation of a scenario run: the
// scenario's Kubernetes objects as the steps so far left them (applied
// manifest revisions, each VM's labels, node, DHCP lease and whether it
// runs, one virt-launcher pod per VM), handed to the real compiler
// (package internal/qos) as typed objects, and the compiled rows' verdict
// for a flow's first packet (package internal/intent). It is pure: no
// testbed, no processes.
package world

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	nadv1 "github.com/nqos/nqos/api/nad/v1"
	udnv1 "github.com/nqos/nqos/api/udn/v1"
	"github.com/nqos/nqos/internal/qos"
	"github.com/nqos/nqos/scenarios"
)

// World is the scenario's objects as the steps so far left them: the
// applied manifest revisions and each VM's labels, with one
// virt-launcher pod per VM. What the compiler makes of it is the intent
// the simulation tier compares with ovn-trace and the capture. It is
// not safe for concurrent use.
type World struct {
	sc      *scenarios.Scenario
	applied map[string]*scenarios.Manifest // by manifest id
	labels  map[string]map[string]string   // by VM
	absent  map[string]bool                // late VMs not started yet
	node    map[string]int                 // node index per VM (migrations move it)
	leases  map[string]string              // DHCP lease (CIDR) per VM, once a flow used it
	// assigned are the addresses a VM's pod got on a first network with
	// subnets, as the environment reported them.
	assigned map[string]scenarios.Addresses
}

// New is the world before the first step: nothing applied, every VM
// with the topology's labels on the topology's node, late VMs absent.
func New(sc *scenarios.Scenario) *World {
	w := &World{sc: sc, applied: map[string]*scenarios.Manifest{}, labels: map[string]map[string]string{}, absent: map[string]bool{}, node: map[string]int{}, leases: map[string]string{},
		assigned: map[string]scenarios.Addresses{}}
	for _, vm := range sc.Topology.VMs {
		w.labels[vm.Name] = maps.Clone(vm.Labels)
		w.absent[vm.Name] = vm.Late
		w.node[vm.Name] = vm.Node
	}
	return w
}

// Apply records manifest revision m applied (replacing the manifest's
// earlier revision).
func (w *World) Apply(m *scenarios.Manifest) { w.applied[m.ID] = m }

// Remove records manifest m deleted.
func (w *World) Remove(m *scenarios.Manifest) { delete(w.applied, m.ID) }

// Applied is the applied revision of manifest id, nil when not applied.
func (w *World) Applied(id string) *scenarios.Manifest { return w.applied[id] }

// StartVM records VM vm started: its launcher pod exists.
func (w *World) StartVM(vm string) { w.absent[vm] = false }

// Absent reports whether VM vm (a late one) is not running.
func (w *World) Absent(vm string) bool { return w.absent[vm] }

// StopVM records a late VM stopped: its launcher pod is gone, and a new
// start creates one with the topology's labels on the topology's node.
func (w *World) StopVM(name string) {
	vm := w.sc.VM(name)
	w.absent[name] = true
	w.labels[name] = maps.Clone(vm.Labels)
	w.node[name] = vm.Node
}

// Move records VM vm migrated to node index node.
func (w *World) Move(vm string, node int) { w.node[vm] = node }

// Node is the node index VM vm runs on now.
func (w *World) Node(vm string) int { return w.node[vm] }

// Label is VM vm's label key and whether it is set.
func (w *World) Label(vm, key string) (string, bool) {
	v, ok := w.labels[vm][key]
	return v, ok
}

// SetLease records the DHCP lease (a CIDR) VM vm holds.
func (w *World) SetLease(vm, lease string) { w.leases[vm] = lease }

// SetAssigned records the addresses VM vm's pod got on its first
// network, one with subnets (its pod-networks entry).
func (w *World) SetAssigned(vm string, a scenarios.Addresses) { w.assigned[vm] = a }

// Relabel sets and removes labels of VM vm's launcher pod.
func (w *World) Relabel(vm string, set map[string]string, remove []string) {
	if w.labels[vm] == nil {
		w.labels[vm] = map[string]string{}
	}
	maps.Copy(w.labels[vm], set)
	for _, k := range remove {
		delete(w.labels[vm], k)
	}
}

// podName is the VM's launcher pod in the world (the real testbed may
// name it differently; the world only needs to be self-consistent).
func podName(vm *scenarios.VM) string { return "virt-launcher-" + vm.Name }

// nad is the namespace and name of the NAD a VM attaches to network
// through: the network's NAD, or for a CUDN the NAD it renders in the
// VM's namespace.
func (w *World) nad(vm *scenarios.VM, network string) (string, string) {
	m := w.sc.NetworkManifest(network)
	if m.Kind == udnv1.Kind {
		return vm.Namespace, m.Name
	}
	return m.Namespace, m.Name
}

// Port is the logical switch port of the VM's first NIC in the world.
func (w *World) Port(vm *scenarios.VM) string { return w.PortOn(vm, vm.Network) }

// PortOn is the logical switch port of the VM's NIC on network.
func (w *World) PortOn(vm *scenarios.VM, network string) string {
	ns, name := w.nad(vm, network)
	return qos.LogicalPortName(ns, name, vm.Namespace, podName(vm))
}

// Compile runs the real compiler over the applied manifests, as typed
// objects, and the pods of the VMs whose network manifest is applied.
func (w *World) Compile() (qos.Desired, error) {
	objs := make([]map[string]any, 0, len(w.applied))
	for _, id := range slices.Sorted(maps.Keys(w.applied)) {
		if !w.applied[id].IsMigration() { // KubeVirt's, not the compiler's
			objs = append(objs, w.applied[id].Object)
		}
	}
	in, err := qos.DecodeObjects(w.sc.File+" (applied manifests)", objs)
	if err == nil {
		err = renderCUDNs(&in)
	}
	if err != nil {
		return qos.Desired{}, fmt.Errorf("scenario %s: %w", w.sc.Name, err)
	}
	for _, vm := range w.sc.Topology.VMs {
		if w.absent[vm.Name] || w.applied[w.sc.NetworkManifest(vm.Network).ID] == nil {
			continue
		}
		in.Pods = append(in.Pods, w.pod(&vm))
	}
	return qos.Compile(in), nil
}

// pod is VM vm's launcher pod in the world: its labels, node and network
// annotations.
func (w *World) pod(vm *scenarios.VM) *corev1.Pod {
	ns, name := w.nad(vm, vm.Network)
	nads := []string{ns + "/" + name}
	for _, n := range vm.More {
		if w.applied[w.sc.NetworkManifest(n.Network).ID] != nil {
			mns, mname := w.nad(vm, n.Network)
			nads = append(nads, mns+"/"+mname)
		}
	}
	ann := map[string]string{nadv1.NetworksAnnotation: strings.Join(nads, ",")}
	if pn := w.podNetworks(vm, ns, name); pn != "" {
		ann["k8s.ovn.org/pod-networks"] = pn
	}
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: podName(vm), Namespace: vm.Namespace, Labels: maps.Clone(w.labels[vm.Name]),
			Annotations: ann},
		Spec: corev1.PodSpec{NodeName: fmt.Sprintf("node-%d", w.node[vm.Name])},
	}
}

// podNetworks is the pod-networks annotation of a VM pod on NAD ns/name:
// its DHCP lease, or on a network with subnets the addresses its pod got
// (SetAssigned; until recorded its static addresses, as the testbed's
// launcher pods carry them); "" otherwise.
func (w *World) podNetworks(vm *scenarios.VM, ns, name string) string {
	var addrs []string
	if lease := w.leases[vm.Name]; lease != "" {
		addrs = []string{lease}
	} else if w.subnets(vm.Network) {
		have, ok := w.assigned[vm.Name]
		if !ok {
			have = vm.Addresses
		}
		for _, a := range []string{have.V4, have.V6} {
			if a != "" {
				addrs = append(addrs, a)
			}
		}
	}
	if len(addrs) == 0 {
		return ""
	}
	js, err := json.Marshal(map[string]map[string]any{ns + "/" + name: {"ip_addresses": addrs, "ip_address": addrs[0], "role": "secondary"}})
	if err != nil {
		return ""
	}
	return string(js)
}

// subnets reports whether the topology network allocates from subnets.
func (w *World) subnets(network string) bool {
	for _, n := range w.sc.Topology.Networks {
		if n.Name == network {
			return n.IPAM == scenarios.IPAMSubnets
		}
	}
	return false
}
