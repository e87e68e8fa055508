package harness

import (
	"bytes"
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

// world is the scenario's objects as the steps so far left them: the
// applied manifest revisions and each VM's labels, with one
// virt-launcher pod per VM. What the compiler makes of it is the intent
// the simulation tier compares with ovn-trace and the capture. It is
// not safe for concurrent use.
type world struct {
	sc      *scenarios.Scenario
	applied map[string]*scenarios.Manifest // by manifest id
	labels  map[string]map[string]string   // by VM
	absent  map[string]bool                // late VMs not started yet
	node    map[string]int                 // node index per VM (migrations move it)
	leases  map[string]string              // DHCP lease (CIDR) per VM, once a flow used it
}

func newWorld(sc *scenarios.Scenario) *world {
	w := &world{sc: sc, applied: map[string]*scenarios.Manifest{}, labels: map[string]map[string]string{}, absent: map[string]bool{}, node: map[string]int{}, leases: map[string]string{}}
	for _, vm := range sc.Topology.VMs {
		w.labels[vm.Name] = maps.Clone(vm.Labels)
		w.absent[vm.Name] = vm.Late
		w.node[vm.Name] = vm.Node
	}
	return w
}

func (w *world) apply(m *scenarios.Manifest)  { w.applied[m.ID] = m }
func (w *world) remove(m *scenarios.Manifest) { delete(w.applied, m.ID) }
func (w *world) startVM(vm string)            { w.absent[vm] = false }

// stopVM records a late VM stopped: its launcher pod is gone, and a new
// start creates one with the topology's labels on the topology's node.
func (w *world) stopVM(name string) {
	vm := w.sc.VM(name)
	w.absent[name] = true
	w.labels[name] = maps.Clone(vm.Labels)
	w.node[name] = vm.Node
}
func (w *world) move(vm string, node int) { w.node[vm] = node }

func (w *world) relabel(vm string, set map[string]string, remove []string) {
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
func (w *world) nad(vm *scenarios.VM, network string) (string, string) {
	m := w.sc.NetworkManifest(network)
	if m.Kind == udnv1.Kind {
		return vm.Namespace, m.Name
	}
	return m.Namespace, m.Name
}

// port is the logical switch port of the VM's first NIC in the world.
func (w *world) port(vm *scenarios.VM) string { return w.portOn(vm, vm.Network) }

// portOn is the logical switch port of the VM's NIC on network.
func (w *world) portOn(vm *scenarios.VM, network string) string {
	ns, name := w.nad(vm, network)
	return qos.LogicalPortName(ns, name, vm.Namespace, podName(vm))
}

// compile runs the real compiler over the applied manifests and the pods
// of the VMs whose network manifest is applied.
func (w *world) compile() (qos.Desired, error) {
	var buf bytes.Buffer
	for _, id := range slices.Sorted(maps.Keys(w.applied)) {
		buf.WriteString("---\n")
		buf.Write(w.applied[id].YAML())
	}
	in, err := qos.DecodeManifests(&buf, w.sc.File+" (applied manifests)")
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
		ns, name := w.nad(&vm, vm.Network)
		nads := []string{ns + "/" + name}
		for _, n := range vm.More {
			if w.applied[w.sc.NetworkManifest(n.Network).ID] != nil {
				mns, mname := w.nad(&vm, n.Network)
				nads = append(nads, mns+"/"+mname)
			}
		}
		ann := map[string]string{nadv1.NetworksAnnotation: strings.Join(nads, ",")}
		if pn := w.podNetworks(&vm, ns, name); pn != "" {
			ann["k8s.ovn.org/pod-networks"] = pn
		}
		in.Pods = append(in.Pods, &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: podName(&vm), Namespace: vm.Namespace, Labels: maps.Clone(w.labels[vm.Name]),
				Annotations: ann},
			Spec: corev1.PodSpec{NodeName: fmt.Sprintf("node-%d", w.node[vm.Name])},
		})
	}
	return qos.Compile(in), nil
}
