// Package localnetenv owns the adapter that runs harness scenarios on the
// real testbed: topo/localnet (OVN central, nodes, fabric, external hosts,
// etcd + kube-apiserver), the NetworkQoS controller of internal/controller
// in-process against the run's NB through internal/ovnnb, VMs from
// package kubevirt, traffic from harness/traffic and uplink captures from
// package capture/live (analysed by package capture). It also runs the
// lifecycle operations of the steps with their measurements: the VM
// operations (vm_*.go: a VM after its policy, the port-group baseline,
// live migration, launcher restart, guest IP change, spoofing) and the
// control-plane ones (cp_*.go: the controller as a process, its restarts,
// daemon restarts, legacy rows and the raw NB transaction monitor). Probe
// packets are watched on the uplinks by a capture/live Watch and counted
// by harness/marks; the pure analyses live in harness/lifeprobe, the
// verdicts in harness/verdict. It implements harness.Provisioner and
// harness.Env and nothing else.
package localnetenv

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"time"

	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"

	udnv1 "github.com/nqos/nqos/api/udn/v1"
	"github.com/nqos/nqos/harness"
	"github.com/nqos/nqos/harness/lifeprobe"
	"github.com/nqos/nqos/internal/ovnnb"
	"github.com/nqos/nqos/kubevirt"
	"github.com/nqos/nqos/scenarios"
	"github.com/nqos/nqos/topo/localnet"
)

// Provisioner boots one testbed per scenario.
type Provisioner struct {
	// Log receives the controller's and NB client's logs; nil discards.
	Log *slog.Logger
	// CRDFiles overrides the CRD manifests (default: config/crd's,
	// embedded in the binary by topo/localnet).
	CRDFiles []string
	// ControllerBin is the nqos-controller binary (make build's
	// bin/nqos-controller) the scenarios run as a process: the central
	// controller of the scenarios that restart or upgrade it
	// (controller.go), and one per zone plus the status aggregator on
	// interconnect (controlplane.go).
	ControllerBin string
	// Kind, if set, runs every scenario on this KinD cluster (kind.go)
	// instead of the embedded testbed.
	Kind *localnet.KindCluster
	// Topology of the embedded testbed (default central).
	Topology localnet.Topology

	mu     sync.Mutex
	runIDs []string
}

// RunIDs are the testbed run IDs provisioned so far (for leftover checks
// and `nqos-sim down`).
func (p *Provisioner) RunIDs() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.runIDs)
}

// testbedEnv is a running testbed with the controller and the scenario's VMs.
type testbedEnv struct {
	sc    *scenarios.Scenario
	fams  []scenarios.Family
	dir   string
	tb    *localnet.Testbed
	be    backend
	nb    *ovnnb.Client // the first zone's
	zones []zoneNB
	plane controlPlane
	kube  kubernetes.Interface
	dyn   dynamic.Interface
	vms   *kubevirt.Manager
	// clock timestamps every LSP appearing in any zone's NB.
	clock *lifeprobe.FirstSeen
	log   *slog.Logger
	// ctrlBin: the controller as a process (controller.go).
	ctrlBin string
	// fab: shaped ports and trust boundaries (fabric.go).
	fab fabricEnv
}

var _ harness.Provisioner = (*Provisioner)(nil)
var (
	_ harness.Env               = (*testbedEnv)(nil)
	_ harness.Lifecycle         = (*testbedEnv)(nil)
	_ harness.Daemons           = (*testbedEnv)(nil)
	_ harness.ControllerProcess = (*testbedEnv)(nil)
	_ harness.Adversary         = (*testbedEnv)(nil)
	_ harness.Lifecycle         = kindEnv{}
	_ harness.Daemons           = kindEnv{}
	_ harness.ControllerProcess = kindEnv{}
)

// newRunID returns a random 4-character run ID ([a-z0-9]).
func newRunID() string {
	const alphabet = "abcdefghijklmnopqrstuvwxyz0123456789"
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	for i := range b {
		b[i] = alphabet[int(b[i])%len(alphabet)]
	}
	return string(b)
}

// Provision boots the testbed, starts the controller and creates the VMs.
// On error everything already started is torn down.
func (p *Provisioner) Provision(ctx context.Context, sc *scenarios.Scenario, fams []scenarios.Family, dir string) (harness.Env, error) {
	spec, err := p.spec(sc, fams)
	if err != nil {
		return nil, err
	}
	p.mu.Lock()
	p.runIDs = append(p.runIDs, spec.RunID)
	p.mu.Unlock()
	e, err := p.boot(ctx, sc, fams, dir, spec)
	if err != nil {
		return nil, err
	}
	return e.be.env(e), nil
}

// Up boots a testbed of spec with the controller running on it as
// Provision does (the spec's topology: one controller for the central
// NB, or an nqos-controller process per zone and the status aggregator,
// their logs in dir), without a scenario's VMs: `nqos-sim up`. close
// stops the controller and tears the testbed down.
func (p *Provisioner) Up(ctx context.Context, spec localnet.Spec, dir string) (tb *localnet.Testbed, close func() error, err error) {
	e, err := p.boot(ctx, &scenarios.Scenario{Name: "up"}, nil, dir, spec)
	if err != nil {
		return nil, nil, err
	}
	return e.tb, e.Close, nil
}

// boot is the one boot path: the testbed of spec, the controller and
// the scenario's VMs. On error everything already started is torn down.
func (p *Provisioner) boot(ctx context.Context, sc *scenarios.Scenario, fams []scenarios.Family, dir string, spec localnet.Spec) (*testbedEnv, error) {
	be := p.backend()
	if err := be.check(sc); err != nil {
		return nil, fmt.Errorf("scenario %s: %w", sc.Name, err)
	}
	be.configure(&spec)
	tb, err := localnet.Up(ctx, spec)
	if err != nil {
		return nil, fmt.Errorf("scenario %s: testbed: %w", sc.Name, asUnsupported(err))
	}
	e := &testbedEnv{sc: sc, fams: fams, dir: dir, tb: tb, be: be, log: p.log(), ctrlBin: p.ControllerBin}
	if err := e.start(ctx, p.log()); err != nil {
		return nil, errors.Join(fmt.Errorf("scenario %s: %w", sc.Name, err), e.Close())
	}
	return e, nil
}

func (p *Provisioner) log() *slog.Logger {
	if p.Log == nil {
		return slog.New(slog.DiscardHandler)
	}
	return p.Log
}

// spec maps the scenario topology to a testbed spec.
func (p *Provisioner) spec(sc *scenarios.Scenario, fams []scenarios.Family) (localnet.Spec, error) {
	var buf bytes.Buffer
	for _, n := range sc.Topology.Networks {
		m, _ := sc.Manifests.Get(n.Manifest)
		buf.WriteString("---\n")
		buf.Write(m.YAML())
	}
	for _, m := range sc.Manifests {
		if m.Kind == "Namespace" {
			buf.WriteString("---\n")
			buf.Write(m.YAML())
		}
	}
	nets, err := localnet.NetworksFromManifests(&buf, sc.File+" (topology networks)")
	if err != nil {
		return localnet.Spec{}, fmt.Errorf("scenario %s: %w", sc.Name, err)
	}
	spec := localnet.Spec{RunID: newRunID(), Nodes: sc.Topology.Nodes, IPFamily: family(fams), Networks: nets,
		Hosts: []localnet.HostSpec{}, Topology: p.Topology, NodeLabels: map[string]map[string]string{}}
	for _, n := range sc.Topology.NodeList {
		spec.NodeLabels[n.Name] = n.Labels
	}
	for _, h := range sc.Topology.Hosts {
		spec.Hosts = append(spec.Hosts, localnet.HostSpec{Name: h.Name, Network: h.Network,
			IPv4: h.Addresses.V4, IPv6: h.Addresses.V6, IperfPorts: iperfPorts(sc, h.Name), DHCPRange: h.DHCPRange,
			Router: h.Router})
	}
	for _, r := range sc.Topology.Routers {
		spec.Routers = append(spec.Routers, localnet.RouterSpec{Name: r.Name, Network: r.Network,
			IPv4: r.Gateway.V4, IPv6: r.Gateway.V6, SiteIPv4: r.Site.V4, SiteIPv6: r.Site.V6})
	}
	return spec, nil
}

func family(fams []scenarios.Family) localnet.IPFamily {
	switch {
	case len(fams) == 2:
		return localnet.DualStack
	case len(fams) == 1 && fams[0] == scenarios.V6:
		return localnet.IPv6
	}
	return localnet.IPv4
}

// iperfPorts are the ports iperf3 flows use towards a host.
func iperfPorts(sc *scenarios.Scenario, host string) []int {
	var ports []int
	for _, f := range sc.Flows {
		if f.To == host && f.Tool == scenarios.ToolIPerf3 && !slices.Contains(ports, f.Port) {
			ports = append(ports, f.Port)
		}
	}
	slices.Sort(ports)
	return ports
}

// start connects the NB, runs the controller and creates the VMs.
func (e *testbedEnv) start(ctx context.Context, log *slog.Logger) error {
	cfg := e.tb.RESTConfig()
	if cfg == nil {
		return errors.New("testbed has no Kubernetes API")
	}
	var err error
	if e.kube, err = kubernetes.NewForConfig(cfg); err != nil {
		return fmt.Errorf("kubernetes client: %w", err)
	}
	if e.dyn, err = dynamic.NewForConfig(cfg); err != nil {
		return fmt.Errorf("dynamic client: %w", err)
	}
	if err := e.dialZones(ctx, log); err != nil {
		return err
	}
	if err := e.be.startController(ctx, e, log); err != nil {
		return err
	}
	return e.createVMs(ctx)
}

// createVMs creates the VMs that are not late.
func (e *testbedEnv) createVMs(ctx context.Context) error {
	e.vms = kubevirt.NewManager(e.tb, e.kube)
	e.clock = lifeprobe.NewFirstSeen()
	for _, z := range e.zones {
		z.nb.OnLogicalSwitchPortAdd(e.clock.Add)
	}
	for i := range e.sc.Topology.VMs {
		vm := &e.sc.Topology.VMs[i]
		if vm.Late {
			continue
		}
		if err := e.vms.Create(ctx, e.kubevirtVM(vm), kubevirt.CreateOptions{}); err != nil {
			return fmt.Errorf("create VM %s: %w", vm.Name, err)
		}
	}
	return nil
}

// kubevirtVM is the kubevirt VM of a topology VM in the run's families.
func (e *testbedEnv) kubevirtVM(vm *scenarios.VM) kubevirt.VM {
	i := slices.IndexFunc(e.sc.Topology.VMs, func(v scenarios.VM) bool { return v.Name == vm.Name })
	// locally administered unicast MAC, unique within the testbed
	ifc := kubevirt.Interface{NAD: e.nadKey(vm, vm.Network), MAC: kubevirt.MACOr(vm.MAC, i), DHCP: vm.DHCP, Routes: guestRoutes(vm.Routes)}
	e.familyAddrs(&ifc, vm.Addresses)
	ifcs := []kubevirt.Interface{ifc}
	for j, n := range vm.More {
		// a further NIC without a MAC gets one past every first NIC's
		more := kubevirt.Interface{NAD: e.nadKey(vm, n.Network), MAC: kubevirt.MACOr(n.MAC, i+(j+1)*len(e.sc.Topology.VMs)),
			Routes: guestRoutes(n.Routes)}
		e.familyAddrs(&more, n.Addresses)
		ifcs = append(ifcs, more)
	}
	return kubevirt.VM{Name: vm.Name, Namespace: vm.Namespace, Labels: vm.Labels, Node: e.nodeName(vm.Node),
		Interfaces: ifcs}
}

// guestRoutes are a NIC's routes (validated with the scenario).
func guestRoutes(rs []scenarios.Route) []kubevirt.Route {
	var out []kubevirt.Route
	for _, r := range rs {
		dst, via, _ := r.Parse()
		out = append(out, kubevirt.Route{Dst: dst, Via: via})
	}
	return out
}

// familyAddrs gives the interface the addresses of the run's families.
func (e *testbedEnv) familyAddrs(ifc *kubevirt.Interface, a scenarios.Addresses) {
	if slices.Contains(e.fams, scenarios.V4) {
		ifc.IPv4 = a.V4
	}
	if slices.Contains(e.fams, scenarios.V6) {
		ifc.IPv6 = a.V6
	}
}

// StartVM creates a late VM's launcher pod and plugs its guest without
// its LSP and returns the LSP's name.
func (e *testbedEnv) StartVM(ctx context.Context, vm *scenarios.VM) (string, error) {
	if err := e.vms.Create(ctx, e.kubevirtVM(vm), kubevirt.CreateOptions{SkipLSP: true}); err != nil {
		return "", fmt.Errorf("create VM %s: %w", vm.Name, err)
	}
	return e.PortName(vm)
}

// CreatePort creates the LSP of a VM StartVM started, as ovnkube's pod
// handler does, and waits until it is bound up.
func (e *testbedEnv) CreatePort(ctx context.Context, vm *scenarios.VM) error {
	return e.vms.CreateLSPs(ctx, vm.Namespace, vm.Name)
}

// nodeName is the testbed node of scenario node index i (0-based).
func (e *testbedEnv) nodeName(i int) string { return e.tb.Nodes()[i].Name }

// nadKey is "ns/name" of the NAD a VM attaches to network through: the
// network's NAD, or for a CUDN the NAD it renders in the VM's namespace.
func (e *testbedEnv) nadKey(vm *scenarios.VM, network string) string {
	m := e.sc.NetworkManifest(network)
	if m.Kind == udnv1.Kind {
		return vm.Namespace + "/" + m.Name
	}
	return m.Namespace + "/" + m.Name
}

// Close stops the controller, disconnects the NB and removes the testbed.
func (e *testbedEnv) Close() error {
	var procErr error
	if e.plane != nil {
		procErr = e.plane.close()
	}
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	procErr = errors.Join(procErr, e.be.clear(ctx, e))
	e.closeZones()
	return errors.Join(procErr, e.tb.Close(ctx))
}
