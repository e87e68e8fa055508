package intent

import (
	"cmp"
	"encoding/json"
	"fmt"
	"maps"
	"net/netip"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	nadv1 "github.com/nqos/nqos/api/nad/v1"
	"github.com/nqos/nqos/internal/qos"
	"github.com/nqos/nqos/scenarios/manifests"
)

// VM is a running VM as the fabric view sees it: its first NIC's port on
// its network's switch, its guest addresses there and its node.
type VM struct {
	Ref             string // "ns/name"
	Namespace, Name string
	Node            string
	Network         string // the first NIC's network
	Switch, Port    string // its logical switch and logical switch port
	Addrs           []netip.Prefix
	// Unknown: the guest addresses are unknown (an ipamless NIC read from
	// a cluster without VirtualMachines or VMI status); the classes are
	// derived as from a VM in the documentation ranges, with no source.
	Unknown bool
}

// Cluster is a set of objects as the compiler reads them, with the VMs
// whose traffic the fabric view derives.
type Cluster struct {
	// Input holds the NetworkQoS objects, Namespaces, NADs (CUDNs
	// rendered into their namespaces), CUDNs and one launcher pod per
	// running VM.
	Input qos.Input
	// VMs are the running VMs, sorted by Ref.
	VMs []VM
	// Notes say which VMs are left out and why, sorted.
	Notes []string
	// Reserved are addresses no destination may use besides the VMs'
	// (those of VMs left out, or of their other NICs).
	Reserved []netip.Addr
}

// LauncherPod is the name the fabric view gives a VM's virt-launcher pod
// when it reads manifests (a cluster names it with a random suffix).
func LauncherPod(vm string) string { return "virt-launcher-" + vm }

// FromSet is the cluster a decoded manifest set makes once its VMs are
// placed on nodes (manifests.Set.Place): a VM that would not start, or
// has no NIC on a localnet network, is left out with a note.
func FromSet(set *manifests.Set, nodes []string) (*Cluster, error) {
	c := &Cluster{}
	for _, objs := range [][]*manifests.Object{set.Namespaces, set.NetworkQoS} {
		for _, o := range objs {
			if err := decodeInto(&c.Input, o); err != nil {
				return nil, err
			}
		}
	}
	nads, err := set.AllNADs()
	if err != nil {
		return nil, err
	}
	c.Input.NADs, c.Input.CUDNs = nads, set.CUDNs
	placed, err := set.Place(nodes)
	if err != nil {
		return nil, err
	}
	for _, r := range placed {
		for _, n := range r.VM.NICs {
			for _, a := range []string{n.IPv4, n.IPv6} {
				if p, err := netip.ParsePrefix(a); err == nil {
					c.Reserved = append(c.Reserved, p.Addr())
				}
			}
		}
		vm, note, err := placedVM(r)
		switch {
		case err != nil:
			return nil, err
		case note != "":
			c.Notes = append(c.Notes, note)
			continue
		}
		c.VMs = append(c.VMs, vm)
		c.Input.Pods = append(c.Input.Pods, launcherPod(r))
	}
	c.sort()
	return c, nil
}

func (c *Cluster) sort() {
	slices.SortFunc(c.VMs, func(a, b VM) int { return cmp.Compare(a.Ref, b.Ref) })
	slices.Sort(c.Notes)
}

// decodeInto adds a Namespace or NetworkQoS object to in, decoded as
// the compiler decodes manifests.
func decodeInto(in *qos.Input, o *manifests.Object) error {
	js, err := json.Marshal(o.Raw)
	if err != nil {
		return fmt.Errorf("%s:%d: %s: %w", o.File, o.Line, o.Ref(), err)
	}
	got, err := qos.DecodeManifests(strings.NewReader(string(js)), fmt.Sprintf("%s:%d", o.File, o.Line))
	if err != nil {
		return err
	}
	in.Namespaces = append(in.Namespaces, got.Namespaces...)
	in.NetworkQoSes = append(in.NetworkQoSes, got.NetworkQoSes...)
	return nil
}

// placedVM is the fabric view's VM of a placed VirtualMachine, or a note
// saying why it has none.
func placedVM(r manifests.Resolved) (VM, string, error) {
	ref := r.VM.Namespace + "/" + r.VM.Name
	switch {
	case !r.VM.Running:
		return VM{}, ref + ": not running (runStrategy)", nil
	case r.Why != "":
		return VM{}, ref + ": would not start: " + r.Why, nil
	case len(r.VM.NICs) == 0:
		return VM{}, ref + ": no multus NIC on a localnet network", nil
	}
	nic, net := r.VM.NICs[0], r.Networks[0]
	ns, name, _ := strings.Cut(nic.NAD, "/")
	vm := VM{Ref: ref, Namespace: r.VM.Namespace, Name: r.VM.Name, Node: r.Node, Network: net.Name, Switch: net.Switch,
		Port: qos.LogicalPortName(ns, name, r.VM.Namespace, LauncherPod(r.VM.Name))}
	for _, a := range []string{nic.IPv4, nic.IPv6} {
		if a == "" {
			continue
		}
		p, err := netip.ParsePrefix(a)
		if err != nil {
			return VM{}, "", fmt.Errorf("%s: VM %s: address %q: %w", r.VM.Object.File, ref, a, err)
		}
		vm.Addrs = append(vm.Addrs, p)
	}
	if len(vm.Addrs) == 0 {
		return VM{}, ref + ": no static address on its first NIC (DHCP): no class to derive", nil
	}
	return vm, "", nil
}

// launcherPod is the virt-launcher pod of a placed VM: the template's
// labels, every NIC's NAD in the networks annotation, the node, and the
// pod-networks annotation OVN-Kubernetes writes for the NICs on networks
// with subnets, holding their static addresses (as the testbed's launcher
// pods carry them): what the compiler's selector destinations read.
func launcherPod(r manifests.Resolved) *corev1.Pod {
	nads := make([]string, len(r.VM.NICs))
	ann := map[string]string{}
	podNetworks := map[string]map[string][]string{}
	for i, n := range r.VM.NICs {
		nads[i] = n.NAD
		if i >= len(r.Networks) || len(r.Networks[i].Subnets) == 0 {
			continue
		}
		var addrs []string
		for _, a := range []string{n.IPv4, n.IPv6} {
			if a != "" {
				addrs = append(addrs, a)
			}
		}
		if len(addrs) > 0 {
			podNetworks[n.NAD] = map[string][]string{"ip_addresses": addrs}
		}
	}
	ann[nadv1.NetworksAnnotation] = strings.Join(nads, ",")
	if len(podNetworks) > 0 {
		js, _ := json.Marshal(podNetworks) // maps of strings always marshal
		ann[qos.PodNetworksAnnotation] = string(js)
	}
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: LauncherPod(r.VM.Name), Namespace: r.VM.Namespace, Labels: maps.Clone(r.VM.Labels),
			Annotations: ann},
		Spec: corev1.PodSpec{NodeName: r.Node},
	}
}

// Taken are the guest addresses of every VM of c, sorted.
func (c *Cluster) Taken() []netip.Addr {
	out := slices.Clone(c.Reserved)
	for _, v := range c.VMs {
		for _, a := range v.Addrs {
			out = append(out, a.Addr())
		}
	}
	slices.SortFunc(out, netip.Addr.Compare)
	return slices.Compact(out)
}
