package localnetenv

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/nqos/nqos/harness/lifeprobe"
	"github.com/nqos/nqos/harness/marks"
	"github.com/nqos/nqos/harness/results"

	"github.com/nqos/nqos/kubevirt"
)

// migrateSpec is a live migration under constant-rate traffic (scenario
// 08-vm-lifecycle).
type migrateSpec struct {
	VM     vmID                   `json:"vm"`
	Target string                 `json:"target"`
	Mode   kubevirt.MigrationMode `json:"mode"`
	// LateTargetLSP creates the target LSP only after the switch
	// (per-pod-lsp): the VM is "migrated in" after its policy.
	LateTargetLSP bool      `json:"lateTargetLSP"`
	Object        objectRef `json:"object"`
	DSCP          int       `json:"dscp"`
	// MTURequest of the target VIF (multi-chassis binding tunnels need
	// headroom for their Geneve encapsulation).
	MTURequest int          `json:"mtuRequest"`
	Traffic    probeTraffic `json:"traffic"`
	// Handover (multi-chassis) orders the handover's writes (default
	// kubevirt.HandoverLSPFirst).
	Handover kubevirt.HandoverOrder `json:"handover,omitempty"`
}

// migrateResult is what Migrate measured. Durations relative to the
// switch are negative for events before it.
type migrateResult struct {
	VM        vmID                     `json:"vm"`
	Mode      kubevirt.MigrationMode   `json:"mode"`
	Late      bool                     `json:"lateTargetLSP"`
	Report    kubevirt.MigrationReport `json:"report"`
	SourceLSP string                   `json:"sourceLSP"`
	TargetLSP string                   `json:"targetLSP"`
	// TargetInGroupBeforeSwitch: the controller had put the target LSP
	// into the object's port group when the guest moved.
	TargetInGroupBeforeSwitch bool `json:"targetInGroupBeforeSwitch"`
	// TargetLSPInNB and TargetInGroup are relative to the switch.
	TargetLSPInNB time.Duration `json:"targetLSPInNBNs"`
	TargetInGroup time.Duration `json:"targetInGroupNs"`
	// TargetLeftGroup: the target LSP was seen out of the port group
	// again, relative to the switch (0: it stayed).
	TargetLeftGroup time.Duration `json:"targetLeftGroupNs"`
	// FirstMarkedOnTarget: switch -> first marked packet on the target
	// node's uplink.
	FirstMarkedOnTarget time.Duration `json:"firstMarkedOnTargetNs"`
	// FirstPacketOnTarget: switch -> first packet, any DSCP, there.
	FirstPacketOnTarget time.Duration `json:"firstPacketOnTargetNs"`
	// LSPToMarked: target LSP in the NB -> first marked packet on the
	// target uplink (meaningful when the LSP is created after the switch).
	LSPToMarked time.Duration `json:"lspToMarkedNs"`
	// Out is guest -> peer, In is peer -> guest (marking applies to Out),
	// over the whole migration (multi-chassis: both phases summed).
	Out lifeprobe.Direction `json:"out"`
	In  lifeprobe.Direction `json:"in"`
	// Phases (multi-chassis only) splits the migration at the handover.
	Phases *migratePhases `json:"phases,omitempty"`
	// Marking counts the guest's packets to the peer on both uplinks
	// over the whole traffic window; OnTarget only after the switch on
	// the target's uplink.
	Marking  marks.Count `json:"marking"`
	OnTarget marks.Count `json:"onTarget"`
}

// Migrate live-migrates the VM while probes run both ways between the
// guest and the peer and both nodes' uplinks are watched.
func (o *vmOps) Migrate(ctx context.Context, spec migrateSpec) (migrateResult, error) {
	res := migrateResult{VM: spec.VM, Mode: spec.Mode, Late: spec.LateTargetLSP}
	fail := func(err error) (migrateResult, error) {
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
	res.fill(s.ups, s.session, spec.DSCP, start, rec, o.clock)
	split.fill(&res, spec.DSCP, start, rec)
	if res.OnTarget.Marked == 0 {
		return fail(fmt.Errorf("no DSCP %d packet from %s on %s's uplink after the switch", spec.DSCP, vmIP, spec.Target))
	}
	return res, nil
}

// beforeSwitch records whether the prepared target port is already in
// the object's port group when the guest moves.
func (o *vmOps) beforeSwitch(obj objectRef, res *migrateResult) func(context.Context, kubevirt.MigrationReport) error {
	return func(ctx context.Context, rep kubevirt.MigrationReport) error {
		members, err := o.Members(ctx, obj)
		if err != nil {
			return err
		}
		res.TargetInGroupBeforeSwitch = rep.TargetLSP != "" && slices.Contains(members, rep.TargetLSP)
		return nil
	}
}

// fill computes the figures from the watches and recordings.
func (r *migrateResult) fill(ups *uplinks, s *session, dscp int, start time.Time, rec *memberRecorder, clock *lifeprobe.FirstSeen) {
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

// life is the migration as a lifecycle step's result: the figures the
// report shows, the probe counts the verdicts judge, the whole result as
// its detail.
func (res migrateResult) life() lifeprobe.Outcome {
	return lifeprobe.Outcome{
		Packets: res.Marking.Packets, Unmarked: res.Marking.Unmarked,
		Lost: map[string]int{lifeprobe.Out: res.Out.Lost, lifeprobe.In: res.In.Lost},
		Sent: map[string]int{lifeprobe.Out: res.Out.Sent, lifeprobe.In: res.In.Sent},
		Measures: append([]results.Measure{
			lifeprobe.Measured("target prepared (pod, LSP, port bound)", res.Report.Prepared),
			lifeprobe.Measured("target LSP in its port group, relative to the switch", res.TargetInGroup),
			lifeprobe.Measured("switch → first marked packet on the target uplink", res.FirstMarkedOnTarget),
			lifeprobe.Measured("longest gap guest → peer", res.Out.LongestGap),
			lifeprobe.Measured("longest gap peer → guest", res.In.LongestGap),
			lifeprobe.Counted("probe packets seen on the uplinks", res.Marking.Packets, "packets"),
			lifeprobe.Counted("probe packets unmarked", res.Marking.Unmarked, "packets"),
			lifeprobe.Counted("probe datagrams lost guest → peer", res.Out.Lost, "datagrams"),
			lifeprobe.Counted("probe datagrams lost peer → guest", res.In.Lost, "datagrams"),
		}, append(res.lateMeasures(), res.handoverMeasures()...)...),
		Detail: res,
	}
}

// lateMeasures are the figures of a VM migrated in after its NetworkQoS
// (its target LSP created after the switch): the controller has to find
// a port it has never seen, as for a VM that starts after its policy.
func (res migrateResult) lateMeasures() []results.Measure {
	if !res.Late {
		return nil
	}
	return []results.Measure{
		lifeprobe.Measured("switch → target LSP created (late)", res.TargetLSPInNB),
		lifeprobe.Measured("switch → target LSP in its port group", res.TargetInGroup),
		lifeprobe.Measured("target LSP created → first marked packet on the target uplink", res.LSPToMarked),
		lifeprobe.Counted("probe packets unmarked on the target after the switch", res.OnTarget.Unmarked, "packets"),
	}
}

// handoverMeasures are the multi-chassis figures per phase: the switch
// (guest moved, binding settled on the target) and the handover of the
// LSP to the target pod (renamed in place, VIF re-pointed).
func (res migrateResult) handoverMeasures() []results.Measure {
	ph, rep := res.Phases, res.Report
	if ph == nil {
		return nil
	}
	return []results.Measure{
		lifeprobe.Measured("handover: LSP renamed to the target pod's port → bound there with flows", rep.Handover),
		lifeprobe.Measured("handover: port in its port group under the new name, after the handover began", ph.NameInGroup),
		lifeprobe.Counted("switch: probe datagrams lost guest → peer", ph.Switch.Out.Lost, "datagrams"),
		lifeprobe.Counted("switch: probe datagrams lost peer → guest", ph.Switch.In.Lost, "datagrams"),
		lifeprobe.Counted("switch: probe packets unmarked", ph.Switch.Marking.Unmarked, "packets"),
		lifeprobe.Counted("handover: probe datagrams lost guest → peer", ph.Handover.Out.Lost, "datagrams"),
		lifeprobe.Counted("handover: probe datagrams lost peer → guest", ph.Handover.In.Lost, "datagrams"),
		lifeprobe.Counted("handover: probe packets unmarked", ph.Handover.Marking.Unmarked, "packets"),
	}
}
