package localnetenv

import (
	"context"
	"fmt"
	"maps"
	"net"
	"net/netip"
	"slices"
	"time"

	"github.com/nqos/nqos/capture"
	"github.com/nqos/nqos/capture/live"
	"github.com/nqos/nqos/harness/lifeprobe"

	"github.com/nqos/nqos/internal/qos"
	"github.com/nqos/nqos/kubevirt"
	"github.com/nqos/nqos/topo/localnet"
)

// testbed is what the operations need from the localnet testbed;
// *localnet.Testbed implements it.
type testbed interface {
	UplinkCapturePoint(node string) (netns, ifname string, err error)
	Host(name string) (localnet.Host, bool)
	// NodeNBCtl runs ovn-nbctl against the NB of node's zone.
	NodeNBCtl(ctx context.Context, node string, args ...string) (string, error)
	Exec(ctx context.Context, netns string, argv ...string) (string, error)
	LinkMAC(netns, ifname string) (net.HardwareAddr, error)
}

// vmRunner is what the operations need from the VM manager; *kubevirt.Manager
// implements it.
type vmRunner interface {
	Create(ctx context.Context, vm kubevirt.VM, opts kubevirt.CreateOptions) error
	CreateLSPs(ctx context.Context, namespace, name string) error
	Get(namespace, name string) (kubevirt.Instance, error)
	Migrate(ctx context.Context, namespace, name, target string, opts kubevirt.MigrateOptions) (kubevirt.MigrationReport, error)
	RestartLauncher(ctx context.Context, namespace, name string) error
	SetGuestIP(ctx context.Context, namespace, name string, i int, ipv4, ipv6 string) error
}

// nbReader is what the operations read from the Northbound database;
// *ovnnb.Client implements it.
type nbReader interface {
	Rows(ctx context.Context) (qos.Desired, error)
	OnLogicalSwitchPortAdd(fn func(lspName string))
}

// vmOps performs lifecycle operations on one testbed.
type vmOps struct {
	tb    testbed
	vms   vmRunner
	nb    nbReader
	clock *lifeprobe.FirstSeen
}

// newVMOps returns the operations of a testbed. It registers a callback on nb
// that timestamps every LSP appearing in the NB, so nb must outlive the Ops.
func newVMOps(tb testbed, vms vmRunner, nb nbReader) *vmOps {
	c := lifeprobe.NewFirstSeen()
	nb.OnLogicalSwitchPortAdd(c.Add)
	return &vmOps{tb: tb, vms: vms, nb: nb, clock: c}
}

// objectRef names a NetworkQoS.
type objectRef struct {
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
}

func (r objectRef) String() string { return r.Namespace + "/" + r.Name }

// Members are the LSPs in the port groups the NB holds for the object,
// sorted; a failed NB read is an error.
func (o *vmOps) Members(ctx context.Context, obj objectRef) ([]string, error) {
	rows, err := o.nb.Rows(ctx)
	if err != nil {
		return nil, fmt.Errorf("port-group members of NetworkQoS %s: %w", obj, err)
	}
	var out []string
	for _, pg := range rows.PortGroups {
		if pg.ExternalIDs[qos.ObjectNameKey] == obj.Namespace+":"+obj.Name {
			out = append(out, pg.Ports...)
		}
	}
	slices.Sort(out)
	return slices.Compact(out), nil
}

// waitMember polls until lsp is (in=true) or is not (in=false) a member
// of the object's port groups and returns when that was first seen.
func (o *vmOps) waitMember(ctx context.Context, obj objectRef, lsp string, in bool, timeout time.Duration) (time.Time, error) {
	var at time.Time
	what := fmt.Sprintf("LSP %s in port group of NetworkQoS %s = %v", lsp, obj, in)
	err := localnet.Poll(ctx, timeout, what, func(context.Context) (bool, error) {
		members, err := o.Members(ctx, obj)
		if err != nil {
			return false, err
		}
		if slices.Contains(members, lsp) == in {
			at = time.Now()
			return true, nil
		}
		return false, nil
	})
	return at, err
}

// instance returns the running VM and its first interface's IPv4 address.
func (o *vmOps) instance(vm vmID) (kubevirt.Instance, netip.Addr, error) {
	in, err := o.vms.Get(vm.Namespace, vm.Name)
	if err != nil {
		return in, netip.Addr{}, err
	}
	if len(in.VM.Interfaces) == 0 || len(in.LSPs) == 0 {
		return in, netip.Addr{}, fmt.Errorf("VM %s: no interface", vm)
	}
	p, err := netip.ParsePrefix(in.VM.Interfaces[0].IPv4)
	if err != nil {
		return in, netip.Addr{}, fmt.Errorf("VM %s: interfaces[0].IPv4 %q: %w", vm, in.VM.Interfaces[0].IPv4, err)
	}
	return in, p.Addr(), nil
}

// vmID names a VM.
type vmID = lifeprobe.VM

// host returns an external host and its IPv4 address.
func (o *vmOps) host(name string) (localnet.Host, netip.Addr, error) {
	h, ok := o.tb.Host(name)
	if !ok {
		return h, netip.Addr{}, fmt.Errorf("no host %q on the testbed", name)
	}
	p, err := netip.ParsePrefix(h.IPv4)
	if err != nil {
		a, aerr := netip.ParseAddr(h.IPv4)
		if aerr != nil {
			return h, netip.Addr{}, fmt.Errorf("host %s: IPv4 %q: %w", name, h.IPv4, err)
		}
		return h, a, nil
	}
	return h, p.Addr(), nil
}

// mac reads the MAC address of ifname inside netns.
func (o *vmOps) mac(ctx context.Context, netns, ifname string) (net.HardwareAddr, error) {
	return o.tb.LinkMAC(netns, ifname)
}

// watchUplinks starts a DSCP watch on the uplink of every node given.
func (o *vmOps) watchUplinks(nodes ...string) (*uplinks, error) {
	u := &uplinks{ws: map[string]*live.Watch{}}
	for _, n := range nodes {
		ns, ifname, err := o.tb.UplinkCapturePoint(n)
		if err == nil {
			var w *live.Watch
			if w, err = live.StartWatch(ns, ifname); err == nil {
				u.ws[n] = w
				continue
			}
		}
		u.Close()
		return nil, fmt.Errorf("watch uplink of %s: %w", n, err)
	}
	return u, nil
}

// uplinks are DSCP watches on node uplinks, by node.
type uplinks struct {
	ws map[string]*live.Watch
}

// seen is what every watched uplink saw from src, in time order.
func (u *uplinks) seen(src netip.Addr) []capture.Packet {
	var out []capture.Packet
	for _, w := range u.ws {
		out = append(out, w.Packets(src)...)
	}
	slices.SortStableFunc(out, func(a, b capture.Packet) int { return a.At.Compare(b.At) })
	return out
}

// onNode is what one node's uplink saw from src (nil if not watched).
func (u *uplinks) onNode(node string, src netip.Addr) []capture.Packet {
	w, ok := u.ws[node]
	if !ok {
		return nil
	}
	return w.Packets(src)
}

// err is why a watch stopped recording early (nil while all record):
// what a dead watch did not see must never count as unmarked or lost.
func (u *uplinks) err() error {
	for _, node := range slices.Sorted(maps.Keys(u.ws)) {
		if err := u.ws[node].Err(); err != nil {
			return fmt.Errorf("uplink of %s: %w", node, err)
		}
	}
	return nil
}

// Close stops every watch.
func (u *uplinks) Close() {
	for _, w := range u.ws {
		w.Close()
	}
}
