package localnetenv

import (
	"context"
	"fmt"
	"time"

	"github.com/nqos/nqos/capture"
	"github.com/nqos/nqos/harness/lifeprobe"
	"github.com/nqos/nqos/harness/marks"

	"github.com/nqos/nqos/kubevirt"
	"github.com/nqos/nqos/topo/localnet"
)

// appearSpec is a VM created while a NetworkQoS selecting it already
// exists (scenario 07-vm-after-policy).
type appearSpec struct {
	VM kubevirt.VM `json:"-"`
	// Object is the NetworkQoS whose port group must take the VM's port.
	Object objectRef `json:"object"`
	// DSCP is the mark the object puts on the VM's traffic to the peer.
	DSCP    int          `json:"dscp"`
	Traffic probeTraffic `json:"traffic"`
}

// VMAppears creates the VM without its LSP, starts the guest's probe to
// the peer (nothing leaves the guest's port until OVN binds it), then
// creates the LSP as ovnkube would and measures LSP creation -> first
// marked packet on the VM node's uplink, with the controller's
// port-group update and the binding in between.
func (o *vmOps) VMAppears(ctx context.Context, spec appearSpec) (lifeprobe.Appearance, error) {
	ref := vmID{Namespace: spec.VM.Namespace, Name: spec.VM.Name}
	res := lifeprobe.Appearance{VM: ref, Node: spec.VM.Node}
	fail := func(err error) (lifeprobe.Appearance, error) { return res, fmt.Errorf("VM %s appears: %w", ref, err) }
	if err := o.vms.Create(ctx, spec.VM, kubevirt.CreateOptions{SkipLSP: true}); err != nil {
		return fail(err)
	}
	in, vmIP, err := o.instance(ref)
	if err != nil {
		return fail(err)
	}
	res.LSP = in.LSPs[0]
	s, err := o.watchedSession(ctx, in, vmIP, spec.Traffic, false)
	if err != nil {
		return fail(err)
	}
	defer s.close()
	ups := s.ups
	rec := o.recordMembers(ctx, spec.Object)
	defer func() { _ = rec.stop() }()
	res.CommandAt = time.Now()
	if err := o.vms.CreateLSPs(ctx, ref.Namespace, ref.Name); err != nil {
		return fail(err)
	}
	res.PortUp = time.Since(res.CommandAt)
	var first capture.Packet
	err = localnet.Poll(ctx, s.tr.Timeout, fmt.Sprintf("DSCP %d from %s on %s's uplink", spec.DSCP, vmIP, in.Node),
		func(context.Context) (bool, error) {
			var ok bool
			first, ok = marks.First(ups.seen(vmIP), s.peerIP, spec.DSCP, res.CommandAt)
			return ok, ups.err()
		})
	if err != nil {
		return fail(err)
	}
	if res.Out, _, err = s.end(ctx, rec); err != nil {
		return fail(err)
	}
	seen := ups.seen(vmIP)
	res.Marking = marks.Tally(seen, s.peerIP, spec.DSCP, res.CommandAt, time.Time{})
	res.FirstMarked = first.At.Sub(res.CommandAt)
	if p, ok := marks.First(seen, s.peerIP, -1, res.CommandAt); ok {
		res.FirstPacket = p.At.Sub(res.CommandAt)
	}
	if at, ok := o.clock.At(res.LSP); ok {
		res.LSPInNB = at.Sub(res.CommandAt)
	}
	joined, _ := rec.Times(res.LSP)
	if joined.IsZero() {
		return fail(fmt.Errorf("LSP %s never seen in the port group of NetworkQoS %s", res.LSP, spec.Object))
	}
	res.InGroup = joined.Sub(res.CommandAt)
	return res, nil
}
