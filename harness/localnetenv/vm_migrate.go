package localnetenv

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/nqos/nqos/harness/lifeprobe"
	"github.com/nqos/nqos/harness/marks"

	"github.com/nqos/nqos/kubevirt"
)

// migrateSpec is a live migration under constant-rate traffic (scenario
// 08-vm-lifecycle).
type migrateSpec struct {
	guestOp
	Target string                 `json:"target"`
	Mode   kubevirt.MigrationMode `json:"mode"`
	// LateTargetLSP creates the target LSP only after the switch
	// (per-pod-lsp): the VM is "migrated in" after its policy.
	LateTargetLSP bool `json:"lateTargetLSP"`
	// MTURequest of the target VIF (multi-chassis binding tunnels need
	// headroom for their Geneve encapsulation).
	MTURequest int `json:"mtuRequest"`
	// Handover (multi-chassis) orders the handover's writes (default
	// kubevirt.HandoverLSPFirst).
	Handover kubevirt.HandoverOrder `json:"handover,omitempty"`
}

// Migrate live-migrates the VM while probes run both ways between the
// guest and the peer and both nodes' uplinks are watched.
func (o *vmOps) Migrate(ctx context.Context, spec migrateSpec) (lifeprobe.Migration, error) {
	res := lifeprobe.Migration{VM: spec.VM, Mode: spec.Mode, Late: spec.LateTargetLSP}
	fail := func(err error) (lifeprobe.Migration, error) {
		return res, fmt.Errorf("VM %s migration to %s (%s): %w", spec.VM, spec.Target, spec.Mode, err)
	}
	in, vmIP, err := o.instance(spec.VM)
	if err != nil {
		return fail(err)
	}
	res.SourceLSP = in.LSPs[0]
	s, err := o.watchedSession(ctx, in, vmIP, spec.Traffic, true, in.Node, spec.Target)
	if err != nil {
		return fail(err)
	}
	defer s.close()
	if err := s.waitMore(ctx, 50); err != nil {
		return fail(err)
	}
	start := time.Now()
	rec := o.recordMembers(ctx, spec.Object)
	defer func() { _ = rec.stop() }()
	split := &phaseSplit{o: o, w: s, in: in, vmIP: vmIP, tr: spec.Traffic}
	opts := kubevirt.MigrateOptions{Mode: spec.Mode, LateTargetLSP: spec.LateTargetLSP, MTURequest: spec.MTURequest,
		BeforeSwitch: o.beforeSwitch(spec.Object, &res), BeforeHandover: split.atHandover, Handover: spec.Handover}
	rep, err := o.vms.Migrate(ctx, spec.VM.Namespace, spec.VM.Name, spec.Target, opts)
	res.Report, res.TargetLSP = rep, rep.TargetLSP
	if err != nil {
		return fail(err)
	}
	if res.Out, res.In, err = s.end(ctx, rec); err != nil {
		return fail(err)
	}
	fillMigration(&res, s.ups, s.session, spec.DSCP, start, rec, o.clock)
	split.fill(&res, spec.DSCP, start, rec)
	if res.OnTarget.Marked == 0 {
		return fail(fmt.Errorf("no DSCP %d packet from %s on %s's uplink after the switch", spec.DSCP, vmIP, spec.Target))
	}
	return res, nil
}

// beforeSwitch records whether the prepared target port is already in
// the object's port group when the guest moves.
func (o *vmOps) beforeSwitch(obj objectRef, res *lifeprobe.Migration) func(context.Context, kubevirt.MigrationReport) error {
	return func(ctx context.Context, rep kubevirt.MigrationReport) error {
		members, err := o.Members(ctx, obj)
		if err != nil {
			return err
		}
		res.TargetInGroupBeforeSwitch = rep.TargetLSP != "" && slices.Contains(members, rep.TargetLSP)
		return nil
	}
}

// fillMigration computes r's figures from the watches and recordings.
func fillMigration(r *lifeprobe.Migration, ups *uplinks, s *session, dscp int, start time.Time, rec *memberRecorder, clock *lifeprobe.FirstSeen) {
	sw := r.Report.SwitchAt
	all := ups.seen(s.vmIP)
	r.Marking = marks.Tally(all, s.peerIP, dscp, start, time.Time{})
	target := ups.onNode(r.Report.Target, s.vmIP)
	r.OnTarget = marks.Tally(target, s.peerIP, dscp, sw, time.Time{})
	if !r.OnTarget.FirstMarked.IsZero() {
		r.FirstMarkedOnTarget = r.OnTarget.FirstMarked.Sub(sw)
	}
	if p, ok := marks.First(target, s.peerIP, -1, sw); ok {
		r.FirstPacketOnTarget = p.At.Sub(sw)
	}
	joined, left := rec.Times(r.TargetLSP)
	r.TargetInGroup, r.TargetLeftGroup = lifeprobe.Since(sw, joined), lifeprobe.Since(sw, left)
	if at, ok := clock.At(r.TargetLSP); ok {
		r.TargetLSPInNB = at.Sub(sw)
		if !r.OnTarget.FirstMarked.IsZero() {
			r.LSPToMarked = r.OnTarget.FirstMarked.Sub(at)
		}
	}
}
