package localnetenv

import (
	"context"
	"fmt"
	"time"

	"github.com/nqos/nqos/capture"
	"github.com/nqos/nqos/harness/lifeprobe"
	"github.com/nqos/nqos/harness/marks"

	"github.com/nqos/nqos/kubevirt"
	"github.com/nqos/nqos/scenarios"
	"github.com/nqos/nqos/topo/localnet"
)

// StartVMProbed creates a VM while the NetworkQoS of p selecting it
// already exists (scenario 07-vm-after-policy): the launcher pod and
// guest without the VM's LSP, then the guest's probe to the peer
// (nothing leaves the guest's port until OVN binds it), then the LSP as
// ovnkube would create it. It measures LSP creation -> first packet
// marked with p.DSCP on the VM node's uplink, with the controller's
// port-group update and the binding in between.
func (e *testbedEnv) StartVMProbed(ctx context.Context, vm *scenarios.VM, p *scenarios.Probe) (lifeprobe.Appearance, error) {
	guest := e.kubevirtVM(vm)
	ref := vmRef(vm)
	res := lifeprobe.Appearance{VM: ref, Node: guest.Node}
	fail := func(err error) (lifeprobe.Appearance, error) { return res, fmt.Errorf("VM %s appears: %w", ref, err) }
	if err := e.vms.Create(ctx, guest, kubevirt.CreateOptions{SkipLSP: true}); err != nil {
		return fail(err)
	}
	in, s, err := e.vmSession(ctx, ref, &res.LSP, p.Peer, false)
	if err != nil {
		return fail(err)
	}
	defer s.close()
	rec := e.recordMembers(ctx, p.Manifest)
	defer func() { _ = rec.stop() }()
	res.CommandAt = time.Now()
	if err := e.vms.CreateLSPs(ctx, ref.Namespace, ref.Name); err != nil {
		return fail(err)
	}
	res.PortUp = time.Since(res.CommandAt)
	var first capture.Packet
	err = localnet.Poll(ctx, probeTimeout, fmt.Sprintf("DSCP %d from %s on %s's uplink", p.DSCP, s.vmIP, in.Node),
		func(context.Context) (bool, error) {
			var ok bool
			first, ok = marks.First(s.ups.seen(s.vmIP), s.peerIP, p.DSCP, res.CommandAt)
			return ok, s.ups.err()
		})
	if err != nil {
		return fail(err)
	}
	if res.Out, _, err = s.end(ctx, rec); err != nil {
		return fail(err)
	}
	seen := s.ups.seen(s.vmIP)
	res.Marking = marks.Tally(seen, s.peerIP, p.DSCP, res.CommandAt, time.Time{})
	res.FirstMarked = first.At.Sub(res.CommandAt)
	if p, ok := marks.First(seen, s.peerIP, -1, res.CommandAt); ok {
		res.FirstPacket = p.At.Sub(res.CommandAt)
	}
	if at, ok := e.clock.At(res.LSP); ok {
		res.LSPInNB = at.Sub(res.CommandAt)
	}
	joined, _ := rec.Times(res.LSP)
	if joined.IsZero() {
		return fail(fmt.Errorf("LSP %s never seen in the port group of NetworkQoS %s/%s", res.LSP, p.Manifest.Namespace, p.Manifest.Name))
	}
	res.InGroup = joined.Sub(res.CommandAt)
	return res, nil
}
