package localnetenv

import (
	"context"
	"fmt"
	"maps"
	"net/netip"
	"slices"
	"time"

	"github.com/nqos/nqos/capture"
	"github.com/nqos/nqos/capture/live"
	"github.com/nqos/nqos/harness/lifeprobe"

	"github.com/nqos/nqos/internal/qos"
	"github.com/nqos/nqos/kubevirt"
	"github.com/nqos/nqos/scenarios"
	"github.com/nqos/nqos/topo/localnet"
)

// members are the LSPs in the port groups the NB holds for the
// NetworkQoS of m, sorted; a failed NB read is an error.
func (e *testbedEnv) members(ctx context.Context, m *scenarios.Manifest) ([]string, error) {
	rows, err := e.Rows(ctx)
	if err != nil {
		return nil, fmt.Errorf("port-group members of NetworkQoS %s/%s: %w", m.Namespace, m.Name, err)
	}
	return portGroupMembers(rows, m), nil
}

// portGroupMembers are the LSPs in the port groups of rows owned by the
// NetworkQoS of m, sorted.
func portGroupMembers(rows qos.Desired, m *scenarios.Manifest) []string {
	var out []string
	for _, pg := range rows.PortGroups {
		if ownedBy(pg.ExternalIDs, m) {
			out = append(out, pg.Ports...)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// waitMember polls until lsp is (in=true) or is not (in=false) a member
// of the object's port groups and returns when that was first seen.
func (e *testbedEnv) waitMember(ctx context.Context, m *scenarios.Manifest, lsp string, in bool, timeout time.Duration) (time.Time, error) {
	var at time.Time
	what := fmt.Sprintf("LSP %s in port group of NetworkQoS %s/%s = %v", lsp, m.Namespace, m.Name, in)
	err := localnet.Poll(ctx, timeout, what, func(context.Context) (bool, error) {
		members, err := e.members(ctx, m)
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
func (e *testbedEnv) instance(vm vmID) (kubevirt.Instance, netip.Addr, error) {
	in, err := e.vms.Get(vm.Namespace, vm.Name)
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

// vmRef names a topology VM.
func vmRef(vm *scenarios.VM) vmID {
	return vmID{Namespace: vm.Namespace, Name: vm.Name}
}

// host returns an external host and its IPv4 address.
func (e *testbedEnv) host(name string) (localnet.Host, netip.Addr, error) {
	h, ok := e.tb.Host(name)
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

// watchUplinks starts a DSCP watch on the uplink of every node given.
func (e *testbedEnv) watchUplinks(nodes ...string) (*uplinks, error) {
	u := &uplinks{ws: map[string]*live.Watch{}}
	for _, n := range nodes {
		ns, ifname, err := e.tb.UplinkCapturePoint(n)
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
