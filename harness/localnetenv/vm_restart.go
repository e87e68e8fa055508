package localnetenv

import (
	"context"
	"fmt"
	"net/netip"
	"time"

	"github.com/nqos/nqos/harness/lifeprobe"
	"github.com/nqos/nqos/harness/marks"
	"github.com/nqos/nqos/scenarios"
)

// RestartLauncher recreates the VM's launcher pod (new pod, new LSP, same
// MAC) while the guest sends to p.Peer, and records the port-group
// membership change in the NetworkQoS of p and the marking on the uplink.
func (e *testbedEnv) RestartLauncher(ctx context.Context, vm *scenarios.VM, p *scenarios.Probe) (lifeprobe.Outcome, error) {
	ref := vmRef(vm)
	res := lifeprobe.LauncherRestart{VM: ref}
	fail := func(err error) (lifeprobe.Outcome, error) {
		return lifeprobe.Outcome{}, fmt.Errorf("VM %s launcher restart: %w", ref, err)
	}
	var err error
	if res.MembersBefore, err = e.members(ctx, p.Manifest); err != nil {
		return fail(err)
	}
	_, s, err := e.vmSession(ctx, ref, &res.OldLSP, p.Peer, false)
	if err != nil {
		return fail(err)
	}
	defer s.close()
	if err := s.waitMore(ctx, 50); err != nil {
		return fail(err)
	}
	rec := e.recordMembers(ctx, p.Manifest)
	defer func() { _ = rec.stop() }()
	start := time.Now()
	res.Start = start
	if err := e.vms.RestartLauncher(ctx, vm.Namespace, vm.Name); err != nil {
		return fail(err)
	}
	res.Restart = time.Since(start)
	now, _, err := e.instance(ref)
	if err != nil {
		return fail(err)
	}
	res.NewLSP = now.LSPs[0]
	if _, err := e.waitMember(ctx, p.Manifest, res.NewLSP, true, probeTimeout); err != nil {
		return fail(err)
	}
	if _, err := e.waitMember(ctx, p.Manifest, res.OldLSP, false, probeTimeout); err != nil {
		return fail(err)
	}
	if res.Out, _, err = s.end(ctx, rec); err != nil {
		return fail(err)
	}
	if res.MembersAfter, err = e.members(ctx, p.Manifest); err != nil {
		return fail(err)
	}
	res.Marking = marks.Tally(s.ups.seen(s.vmIP), s.peerIP, p.DSCP, start, time.Time{})
	joined, _ := rec.Times(res.NewLSP)
	_, left := rec.Times(res.OldLSP)
	res.NewInGroup, res.OldOutOfGroup = lifeprobe.Since(start, joined), lifeprobe.Since(start, left)
	if at, ok := e.clock.At(res.NewLSP); ok {
		res.NewLSPInNB = at.Sub(start)
	}
	return res.Outcome(), nil
}

// ChangeGuestIP changes the guest's IPv4 address (CIDR) inside the guest
// (OVN never sees it) between two probe streams to p.Peer and records
// the marking of both addresses and the port-group membership.
func (e *testbedEnv) ChangeGuestIP(ctx context.Context, vm *scenarios.VM, newIPv4 string, p *scenarios.Probe) (lifeprobe.Outcome, error) {
	ref := vmRef(vm)
	res := lifeprobe.GuestIPChange{VM: ref, NewIP: newIPv4}
	fail := func(err error) (lifeprobe.Outcome, error) {
		return lifeprobe.Outcome{}, fmt.Errorf("VM %s guest IP change to %s: %w", ref, newIPv4, err)
	}
	var err error
	if res.MembersBefore, err = e.members(ctx, p.Manifest); err != nil {
		return fail(err)
	}
	newPrefix, err := netip.ParsePrefix(newIPv4)
	if err != nil {
		return fail(fmt.Errorf("new IPv4 %q: %w", newIPv4, err))
	}
	in, oldIP, err := e.instance(ref)
	if err != nil {
		return fail(err)
	}
	res.OldIP, res.NewIP = oldIP.String(), newPrefix.Addr().String()
	ups, err := e.watchUplinks(in.Node)
	if err != nil {
		return fail(err)
	}
	defer ups.Close()
	start := time.Now()
	if res.OutBefore, res.Before, err = e.stream(ctx, in.Netns, in.NICs[0], oldIP, p, ups, start); err != nil {
		return fail(err)
	}
	v6 := in.VM.Interfaces[0].IPv6
	if err := e.vms.SetGuestIP(ctx, vm.Namespace, vm.Name, 0, newIPv4, v6); err != nil {
		return fail(err)
	}
	changed := time.Now()
	if res.OutAfter, res.After, err = e.stream(ctx, in.Netns, in.NICs[0], newPrefix.Addr(), p, ups, changed); err != nil {
		return fail(err)
	}
	if res.MembersAfter, err = e.members(ctx, p.Manifest); err != nil {
		return fail(err)
	}
	return res.Outcome(), nil
}

// stream runs one guest -> p.Peer probe from ip until probeAfter
// datagrams arrived and counts its packets marked p.DSCP on the uplinks
// from t on.
func (e *testbedEnv) stream(ctx context.Context, netns, nic string, ip netip.Addr, p *scenarios.Probe, ups *uplinks, t time.Time) (lifeprobe.Direction, marks.Count, error) {
	s, err := e.startSession(ctx, netns, nic, ip, p.Peer, false)
	if err != nil {
		return lifeprobe.Direction{}, marks.Count{}, err
	}
	defer s.stop()
	if err := s.waitMore(ctx, probeAfter); err != nil {
		return lifeprobe.Direction{}, marks.Count{}, err
	}
	out, _ := s.stop()
	if err := ups.err(); err != nil {
		return out, marks.Count{}, err
	}
	return out, marks.Tally(ups.seen(ip), s.peerIP, p.DSCP, t, time.Time{}), nil
}
