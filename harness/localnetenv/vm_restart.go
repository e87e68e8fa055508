package localnetenv

import (
	"context"
	"fmt"
	"net/netip"
	"time"

	"github.com/nqos/nqos/harness/lifeprobe"
	"github.com/nqos/nqos/harness/marks"
)

// guestOp is a lifecycle event of a running VM selected by a
// NetworkQoS (scenario 08-vm-lifecycle).
type guestOp struct {
	VM      vmID         `json:"vm"`
	Object  objectRef    `json:"object"`
	DSCP    int          `json:"dscp"`
	Traffic probeTraffic `json:"traffic"`
}

// RestartLauncher recreates the VM's launcher pod (new pod, new LSP, same
// MAC) while the guest sends to the peer, and records the port-group
// membership change and the marking on the uplink.
func (o *vmOps) RestartLauncher(ctx context.Context, spec guestOp) (lifeprobe.LauncherRestart, error) {
	res := lifeprobe.LauncherRestart{VM: spec.VM}
	fail := func(err error) (lifeprobe.LauncherRestart, error) {
		return res, fmt.Errorf("VM %s launcher restart: %w", spec.VM, err)
	}
	var err error
	if res.MembersBefore, err = o.Members(ctx, spec.Object); err != nil {
		return fail(err)
	}
	in, vmIP, err := o.instance(spec.VM)
	if err != nil {
		return fail(err)
	}
	res.OldLSP = in.LSPs[0]
	s, err := o.watchedSession(ctx, in, vmIP, spec.Traffic, false)
	if err != nil {
		return fail(err)
	}
	defer s.close()
	ups := s.ups
	if err := s.waitMore(ctx, 50); err != nil {
		return fail(err)
	}
	rec := o.recordMembers(ctx, spec.Object)
	defer func() { _ = rec.stop() }()
	start := time.Now()
	res.Start = start
	if err := o.vms.RestartLauncher(ctx, spec.VM.Namespace, spec.VM.Name); err != nil {
		return fail(err)
	}
	res.Restart = time.Since(start)
	now, _, err := o.instance(spec.VM)
	if err != nil {
		return fail(err)
	}
	res.NewLSP = now.LSPs[0]
	if _, err := o.waitMember(ctx, spec.Object, res.NewLSP, true, s.tr.Timeout); err != nil {
		return fail(err)
	}
	if _, err := o.waitMember(ctx, spec.Object, res.OldLSP, false, s.tr.Timeout); err != nil {
		return fail(err)
	}
	if res.Out, _, err = s.end(ctx, rec); err != nil {
		return fail(err)
	}
	if res.MembersAfter, err = o.Members(ctx, spec.Object); err != nil {
		return fail(err)
	}
	res.Marking = marks.Tally(ups.seen(vmIP), s.peerIP, spec.DSCP, start, time.Time{})
	joined, _ := rec.Times(res.NewLSP)
	_, left := rec.Times(res.OldLSP)
	res.NewInGroup, res.OldOutOfGroup = lifeprobe.Since(start, joined), lifeprobe.Since(start, left)
	if at, ok := o.clock.At(res.NewLSP); ok {
		res.NewLSPInNB = at.Sub(start)
	}
	return res, nil
}

// ChangeGuestIP changes the guest's IPv4 address (CIDR) inside the guest
// (OVN never sees it) between two probe streams to the peer and records
// the marking of both addresses and the port-group membership.
func (o *vmOps) ChangeGuestIP(ctx context.Context, spec guestOp, newIPv4 string) (lifeprobe.GuestIPChange, error) {
	res := lifeprobe.GuestIPChange{VM: spec.VM, NewIP: newIPv4}
	fail := func(err error) (lifeprobe.GuestIPChange, error) {
		return res, fmt.Errorf("VM %s guest IP change to %s: %w", spec.VM, newIPv4, err)
	}
	var err error
	if res.MembersBefore, err = o.Members(ctx, spec.Object); err != nil {
		return fail(err)
	}
	newPrefix, err := netip.ParsePrefix(newIPv4)
	if err != nil {
		return fail(fmt.Errorf("new IPv4 %q: %w", newIPv4, err))
	}
	in, oldIP, err := o.instance(spec.VM)
	if err != nil {
		return fail(err)
	}
	res.OldIP, res.NewIP = oldIP.String(), newPrefix.Addr().String()
	ups, err := o.watchUplinks(in.Node)
	if err != nil {
		return fail(err)
	}
	defer ups.Close()
	start := time.Now()
	if res.OutBefore, res.Before, err = o.stream(ctx, in.Netns, in.NICs[0], oldIP, spec, ups, start); err != nil {
		return fail(err)
	}
	v6 := in.VM.Interfaces[0].IPv6
	if err := o.vms.SetGuestIP(ctx, spec.VM.Namespace, spec.VM.Name, 0, newIPv4, v6); err != nil {
		return fail(err)
	}
	changed := time.Now()
	if res.OutAfter, res.After, err = o.stream(ctx, in.Netns, in.NICs[0], newPrefix.Addr(), spec, ups, changed); err != nil {
		return fail(err)
	}
	if res.MembersAfter, err = o.Members(ctx, spec.Object); err != nil {
		return fail(err)
	}
	return res, nil
}

// stream runs one guest -> peer probe from ip until After datagrams
// arrived and counts its packets on the uplinks from t on.
func (o *vmOps) stream(ctx context.Context, netns, nic string, ip netip.Addr, spec guestOp, ups *uplinks, t time.Time) (lifeprobe.Direction, marks.Count, error) {
	s, err := o.startSession(ctx, netns, nic, ip, spec.Traffic, false)
	if err != nil {
		return lifeprobe.Direction{}, marks.Count{}, err
	}
	defer s.stop()
	if err := s.waitMore(ctx, s.tr.After); err != nil {
		return lifeprobe.Direction{}, marks.Count{}, err
	}
	out, _ := s.stop()
	if err := ups.err(); err != nil {
		return out, marks.Count{}, err
	}
	return out, marks.Tally(ups.seen(ip), s.peerIP, spec.DSCP, t, time.Time{}), nil
}
