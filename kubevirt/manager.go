package kubevirt

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/nqos/nqos/internal/qos"
	"github.com/nqos/nqos/topo/localnet"
)

// Testbed is what the Manager needs from the localnet testbed;
// *localnet.Testbed implements it.
type Testbed interface {
	AddGuest(ctx context.Context, guest string) (string, error)
	PlugGuest(ctx context.Context, p localnet.GuestPlug) error
	ActivatePlug(ctx context.Context, guest, node, nic string) error
	UnplugGuest(ctx context.Context, guest, node, nic string) error
	RemoveGuest(ctx context.Context, guest string) error
	GuestNetns(guest string) string
	Networks() []localnet.Network
	Node(name string) (localnet.Node, bool)
	// NodeNBCtl and NodeSBCtl run ovn-nbctl and ovn-sbctl against the
	// NB and SB of the node's zone (one per node on interconnect, one
	// for every node on the central topology).
	NodeNBCtl(ctx context.Context, node string, args ...string) (string, error)
	NodeSBCtl(ctx context.Context, node string, args ...string) (string, error)
	ZoneOf(node string) (localnet.Zone, error)
	VSCtl(ctx context.Context, node string, args ...string) (string, error)
	Exec(ctx context.Context, netns string, argv ...string) (string, error)
	WaitPortUp(ctx context.Context, lsp string) error
	// GuestNIC names a guest's NIC i; LauncherImage is the image the
	// launcher pods run where pods really run ("": none do).
	GuestNIC(i int) string
	LauncherImage() string
	// LSPOwner is who creates the launcher pods' LSPs: with ovnkube the
	// Manager waits for them (and for their removal) instead of writing
	// them, and leaves the pods' k8s.ovn.org/pod-networks annotation to
	// ovnkube (lspWriter).
	LSPOwner() localnet.LSPOwner
}

// Manager runs VMs on a testbed. Kube may be nil: then no launcher pods
// are written (OVN and guest side only).
type Manager struct {
	tb   Testbed
	kube kubernetes.Interface
	lsps lspWriter
	mu   sync.Mutex
	vms  map[string]*instance // key "ns/name"
}

// instance is a running VM.
type instance struct {
	vm   VM
	pod  string // current launcher pod
	node string
	atts []attachment
	lsps []string // per attachment, current LSP
}

// CreateOptions tune Create.
type CreateOptions struct {
	// SkipLSP plugs the guest but creates no LSP (CreateLSPs does it
	// later), as when ovnkube's pod handler lags behind.
	SkipLSP bool
	// NoWait returns without waiting for the LSPs to be bound up.
	NoWait bool
}

// NewManager returns a Manager for tb; kube may be nil.
func NewManager(tb Testbed, kube kubernetes.Interface) *Manager {
	return &Manager{tb: tb, kube: kube, lsps: lspWriterOf(tb.LSPOwner()), vms: map[string]*instance{}}
}

func key(namespace, name string) string { return namespace + "/" + name }

// Create starts vm: launcher pod, LSPs (unless opts.SkipLSP), guest
// namespace with its NICs plugged into vm.Node and static addresses (on
// a network with subnets those the pod got: assignAddrs).
func (m *Manager) Create(ctx context.Context, vm VM, opts CreateOptions) error {
	if err := vm.Validate(); err != nil {
		return err
	}
	if _, ok := m.tb.Node(vm.Node); !ok {
		return fmt.Errorf("VM %s/%s: node %q is not a testbed node", vm.Namespace, vm.Name, vm.Node)
	}
	atts, err := m.resolve(vm)
	if err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.vms[key(vm.Namespace, vm.Name)]; ok {
		return fmt.Errorf("VM %s/%s exists", vm.Namespace, vm.Name)
	}
	in := &instance{vm: vm, node: vm.Node, atts: atts, lsps: make([]string, len(atts))}
	if _, err := m.tb.AddGuest(ctx, m.guest(vm)); err != nil {
		return fmt.Errorf("VM %s/%s: %w", vm.Namespace, vm.Name, err)
	}
	m.vms[key(vm.Namespace, vm.Name)] = in
	err = m.startLauncher(ctx, in, vm.Node, opts)
	if err == nil {
		err = m.assignAddrs(ctx, in)
	}
	if err == nil {
		err = m.configureGuestIPs(ctx, in)
	}
	if err != nil {
		// Nothing half-applied: remove what was created.
		return errors.Join(err, m.delete(context.WithoutCancel(ctx), in))
	}
	return nil
}

// guest is the testbed guest name of a VM.
func (m *Manager) guest(vm VM) string { return GuestName(vm.Namespace, vm.Name) }

// GuestName is the testbed guest (and netns suffix) of a VM:
// "<namespace>-<name>", or "<name>" in namespace default.
func GuestName(namespace, name string) string {
	if namespace == "default" {
		return name
	}
	return namespace + "-" + name
}

// resolve maps each interface to its testbed network through its NAD.
func (m *Manager) resolve(vm VM) ([]attachment, error) {
	var out []attachment
	for i, ifc := range vm.Interfaces {
		ns, name := ifc.nadKey(vm.Namespace)
		nk := ns + "/" + name
		idx := slices.IndexFunc(m.tb.Networks(), func(n localnet.Network) bool { return slices.Contains(n.NADs, nk) })
		if idx < 0 {
			return nil, fmt.Errorf("VM %s/%s: interfaces[%d].nad %q: no testbed network has this NAD", vm.Namespace, vm.Name, i, nk)
		}
		n := m.tb.Networks()[idx]
		out = append(out, attachment{Interface: ifc, NADNamespace: ns, NADName: name, Switch: n.Switch,
			Network: n.Name, Subnets: n.Subnets, NIC: m.tb.GuestNIC(i)})
	}
	return out, nil
}

// startLauncher creates a launcher pod on node, its LSPs and the guest's
// ports there.
func (m *Manager) startLauncher(ctx context.Context, in *instance, node string, opts CreateOptions) error {
	pod, err := m.createPod(ctx, in, node)
	if err != nil {
		return err
	}
	in.pod, in.node = pod, node
	for i, a := range in.atts {
		in.lsps[i] = qos.LogicalPortName(a.NADNamespace, a.NADName, in.vm.Namespace, pod)
		if err := m.tb.PlugGuest(ctx, localnet.GuestPlug{Guest: m.guest(in.vm), Node: node, IfaceID: in.lsps[i], MAC: a.MAC, NIC: a.NIC}); err != nil {
			return fmt.Errorf("VM %s/%s: %w", in.vm.Namespace, in.vm.Name, err)
		}
	}
	if opts.SkipLSP {
		return nil
	}
	return m.createLSPs(ctx, in, node, opts.NoWait)
}

// createPod writes the launcher pod (when a Kubernetes API is attached)
// and returns its name.
func (m *Manager) createPod(ctx context.Context, in *instance, node string) (string, error) {
	name, err := launcherName(in.vm.Name)
	if err != nil {
		return "", err
	}
	if m.kube == nil {
		return name, nil
	}
	if err := localnet.EnsureNamespace(ctx, m.kube, in.vm.Namespace); err != nil {
		return "", fmt.Errorf("VM %s/%s: %w", in.vm.Namespace, in.vm.Name, err)
	}
	pod, err := launcherPod(in.vm, name, node, in.atts, m.tb.LauncherImage(), m.lsps.podNetworks())
	if err != nil {
		return "", fmt.Errorf("VM %s/%s: launcher pod: %w", in.vm.Namespace, in.vm.Name, err)
	}
	if _, err := m.kube.CoreV1().Pods(in.vm.Namespace).Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		return "", fmt.Errorf("VM %s/%s: create pod %s: %w", in.vm.Namespace, in.vm.Name, name, err)
	}
	return name, nil
}

func (m *Manager) deletePod(ctx context.Context, vm VM, pod string) error {
	if m.kube == nil {
		return nil
	}
	zero := int64(0)
	err := m.kube.CoreV1().Pods(vm.Namespace).Delete(ctx, pod, metav1.DeleteOptions{GracePeriodSeconds: &zero})
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("VM %s/%s: delete pod %s: %w", vm.Namespace, vm.Name, pod, err)
	}
	return nil
}

// withVM runs fn on a running VM under the manager's lock.
func (m *Manager) withVM(namespace, name string, fn func(in *instance) error) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	in, err := m.get(namespace, name)
	if err != nil {
		return err
	}
	return fn(in)
}

func (m *Manager) get(namespace, name string) (*instance, error) {
	in, ok := m.vms[key(namespace, name)]
	if !ok {
		return nil, fmt.Errorf("VM %s/%s: not running", namespace, name)
	}
	return in, nil
}

// Instance is what a running VM currently is.
type Instance struct {
	// VM is the VM as it runs now: its interfaces carry the guest's
	// current static addresses (after SetGuestIP).
	VM       VM
	Pod      string
	Node     string
	LSPs     []string
	Netns    string
	NICs     []string
	Networks []string
	// Leases are the DHCP leases per interface ("" for static ones).
	Leases []string
}

// Get returns a running VM.
func (m *Manager) Get(namespace, name string) (Instance, error) {
	var out Instance
	err := m.withVM(namespace, name, func(in *instance) error {
		out = m.snapshot(in)
		return nil
	})
	return out, err
}

func (m *Manager) snapshot(in *instance) Instance {
	out := Instance{VM: in.vm, Pod: in.pod, Node: in.node, LSPs: slices.Clone(in.lsps), Netns: m.tb.GuestNetns(m.guest(in.vm))}
	out.VM.Interfaces = make([]Interface, len(in.atts))
	for i, a := range in.atts {
		out.VM.Interfaces[i] = a.Interface
		out.NICs = append(out.NICs, a.NIC)
		out.Networks = append(out.Networks, a.Network)
		out.Leases = append(out.Leases, a.IPv4Lease)
	}
	return out
}

// Guest is the network namespace of a VM's guest.
func (m *Manager) Guest(vm VM) string { return m.tb.GuestNetns(m.guest(vm)) }

// Delete stops a VM: launcher pod, LSPs, guest.
func (m *Manager) Delete(ctx context.Context, namespace, name string) error {
	return m.withVM(namespace, name, func(in *instance) error { return m.delete(ctx, in) })
}

func (m *Manager) delete(ctx context.Context, in *instance) error {
	namespace, name := in.vm.Namespace, in.vm.Name
	if in.pod != "" {
		if err := m.deletePod(ctx, in.vm, in.pod); err != nil {
			return err
		}
	}
	for _, l := range in.lsps {
		if l == "" {
			continue
		}
		if err := m.lsps.remove(ctx, m, in.vm, in.node, l); err != nil {
			return err
		}
	}
	if err := m.tb.RemoveGuest(ctx, m.guest(in.vm)); err != nil {
		return fmt.Errorf("VM %s/%s: %w", namespace, name, err)
	}
	delete(m.vms, key(namespace, name))
	return nil
}

// RestartLauncher emulates a VM controller restart: the launcher pod and
// its LSPs are deleted and a new launcher (new name, new LSPs, same MAC)
// is created for the same VM on the same node; the guest NIC re-plugs.
func (m *Manager) RestartLauncher(ctx context.Context, namespace, name string) error {
	return m.withVM(namespace, name, func(in *instance) error { return m.restartLauncher(ctx, in) })
}

func (m *Manager) restartLauncher(ctx context.Context, in *instance) error {
	namespace, name := in.vm.Namespace, in.vm.Name
	if err := m.deletePod(ctx, in.vm, in.pod); err != nil {
		return err
	}
	for i, a := range in.atts {
		if err := m.lsps.remove(ctx, m, in.vm, in.node, in.lsps[i]); err != nil {
			return err
		}
		if err := m.tb.UnplugGuest(ctx, m.guest(in.vm), in.node, a.NIC); err != nil {
			return fmt.Errorf("VM %s/%s: %w", namespace, name, err)
		}
	}
	return m.startLauncher(ctx, in, in.node, CreateOptions{})
}

// SetGuestIP replaces the addresses of interface i inside the guest (OVN
// never sees the change); empty CIDRs remove that family.
func (m *Manager) SetGuestIP(ctx context.Context, namespace, name string, i int, ipv4, ipv6 string) error {
	return m.withVM(namespace, name, func(in *instance) error { return m.setGuestIP(ctx, in, i, ipv4, ipv6) })
}

func (m *Manager) setGuestIP(ctx context.Context, in *instance, i int, ipv4, ipv6 string) error {
	namespace, name := in.vm.Namespace, in.vm.Name
	if i < 0 || i >= len(in.atts) {
		return fmt.Errorf("VM %s/%s: interface %d: out of range", namespace, name, i)
	}
	next := in.atts[i].Interface
	next.IPv4, next.IPv6 = ipv4, ipv6
	if err := next.validate(); err != nil {
		return fmt.Errorf("VM %s/%s: interfaces[%d].%w", namespace, name, i, err)
	}
	ns := m.tb.GuestNetns(m.guest(in.vm))
	if err := flushGuestAddrs(ns, in.atts[i].NIC); err != nil {
		return fmt.Errorf("VM %s/%s: %w", namespace, name, err)
	}
	in.atts[i].Interface = next
	return m.configureNIC(ctx, in, i)
}

// configureGuestIPs sets every interface's static addresses.
func (m *Manager) configureGuestIPs(ctx context.Context, in *instance) error {
	for i := range in.atts {
		if err := m.configureNIC(ctx, in, i); err != nil {
			return err
		}
	}
	return nil
}

func (m *Manager) configureNIC(ctx context.Context, in *instance, i int) error {
	a := in.atts[i]
	ns := m.tb.GuestNetns(m.guest(in.vm))
	var static []string
	for _, c := range []string{a.IPv4, a.IPv6} {
		if c != "" {
			static = append(static, c)
		}
	}
	if err := addGuestAddrs(ns, a.NIC, static...); err != nil {
		return fmt.Errorf("VM %s/%s: interfaces[%d]: %w", in.vm.Namespace, in.vm.Name, i, err)
	}
	if a.DHCP {
		lease, err := DHCPRequest(ctx, ns, a.NIC, a.MAC, 10*time.Second)
		if err != nil {
			return fmt.Errorf("VM %s/%s: interfaces[%d]: %w", in.vm.Namespace, in.vm.Name, i, err)
		}
		if err := addGuestAddrs(ns, a.NIC, lease.String()); err != nil {
			return fmt.Errorf("VM %s/%s: interfaces[%d]: %w", in.vm.Namespace, in.vm.Name, i, err)
		}
		in.atts[i].IPv4Lease = lease.String()
		if err := m.publishLease(ctx, in, i); err != nil {
			return err
		}
	}
	var routes []Route
	for _, r := range a.Routes {
		if a.hasFamily(r.Via) {
			routes = append(routes, r)
		}
	}
	if err := addGuestRoutes(ns, a.NIC, routes); err != nil {
		return fmt.Errorf("VM %s/%s: interfaces[%d]: %w", in.vm.Namespace, in.vm.Name, i, err)
	}
	return nil
}
