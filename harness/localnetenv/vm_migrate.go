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
	"github.com/nqos/nqos/scenarios"
)

// Migrate live-migrates the VM to node index m.To in the mode
// migrationMode gives (scenario 08-vm-lifecycle) while probes run both
// ways between the guest and p.Peer and both nodes' uplinks are watched.
// With m.LateTargetLSP (per-pod-lsp) the target LSP is created only
// after the switch: the VM is "migrated in" after its policy.
func (e *testbedEnv) Migrate(ctx context.Context, vm *scenarios.VM, m *scenarios.Migrate, p *scenarios.Probe) (lifeprobe.Outcome, error) {
	target := e.nodeName(m.To)
	mode, note, err := e.migrationMode(vm, target, kubevirt.MigrationMode(m.Mode))
	if err != nil {
		return lifeprobe.Outcome{}, err
	}
	ref := vmRef(vm)
	res := lifeprobe.Migration{VM: ref, Mode: mode, Late: m.LateTargetLSP}
	fail := func(err error) (lifeprobe.Outcome, error) {
		return lifeprobe.Outcome{}, fmt.Errorf("VM %s migration to %s (%s): %w", ref, target, mode, err)
	}
	in, s, err := e.vmSession(ctx, ref, &res.SourceLSP, p.Peer, true, target)
	if err != nil {
		return fail(err)
	}
	defer s.close()
	if err := s.waitMore(ctx, 50); err != nil {
		return fail(err)
	}
	start := time.Now()
	rec := e.recordMembers(ctx, p.Manifest)
	defer func() { _ = rec.stop() }()
	split := &phaseSplit{e: e, w: s, in: in, peer: p.Peer}
	opts := kubevirt.MigrateOptions{Mode: mode, LateTargetLSP: m.LateTargetLSP,
		BeforeSwitch: e.beforeSwitch(p.Manifest, &res), BeforeHandover: split.atHandover}
	rep, err := e.vms.Migrate(ctx, vm.Namespace, vm.Name, target, opts)
	res.Report, res.TargetLSP = rep, rep.TargetLSP
	if err != nil {
		return fail(err)
	}
	if res.Out, res.In, err = s.end(ctx, rec); err != nil {
		return fail(err)
	}
	split.fill(&res, p.DSCP, start, rec)
	if res.OnTarget.Marked == 0 {
		return fail(fmt.Errorf("no DSCP %d packet from %s on %s's uplink after the switch", p.DSCP, s.vmIP, target))
	}
	out := res.Outcome()
	if note != "" {
		out.Measures = append([]results.Measure{{Name: "migration mode", Note: note}}, out.Measures...)
	}
	return out, nil
}

// migrationMode is the mode a migration of vm to target runs in: the
// step's, except a multi-chassis migration between zones, which runs as
// ovnkube's interconnect runs every localnet migration: the target pod's
// own port in the target zone (per-pod-lsp), the source zone's port
// deleted with the source pod. One port cannot be in two Northbounds,
// so it cannot be bound on a chassis of each. note says so ("" else).
func (e *testbedEnv) migrationMode(vm *scenarios.VM, target string, mode kubevirt.MigrationMode) (kubevirt.MigrationMode, string, error) {
	if mode != kubevirt.MigrateMultiChassis {
		return mode, "", nil
	}
	src, err := e.zoneOfVM(vm.Namespace, vm.Name)
	if err != nil {
		return "", "", err
	}
	if src.zone.Has(target) {
		return mode, "", nil
	}
	return kubevirt.MigratePerPodLSP, fmt.Sprintf("%s across zones (%s to %s) runs as %s, as ovnkube on interconnect migrates a localnet VM: "+
		"a port cannot be bound in two zones' Northbounds", mode, src.zone.Name, target, kubevirt.MigratePerPodLSP), nil
}

// beforeSwitch records whether the prepared target port is already in
// the object's port group when the guest moves.
func (e *testbedEnv) beforeSwitch(obj *scenarios.Manifest, res *lifeprobe.Migration) func(context.Context, kubevirt.MigrationReport) error {
	return func(ctx context.Context, rep kubevirt.MigrationReport) error {
		members, err := e.members(ctx, obj)
		if err != nil {
			return err
		}
		res.TargetInGroupBeforeSwitch = rep.TargetLSP != "" && slices.Contains(members, rep.TargetLSP)
		return nil
	}
}

// fill computes r's figures from the watches and recordings; when the
// probes were split it sets r.Phases from the two phases and makes r.Out
// and r.In the sums over both (they hold the second phase when called).
func (p *phaseSplit) fill(r *lifeprobe.Migration, dscp int, start time.Time, rec *memberRecorder) {
	sw := r.Report.SwitchAt
	all := p.w.ups.seen(p.w.vmIP)
	peer := p.w.peerIP
	r.Marking = marks.Tally(all, peer, dscp, start, time.Time{})
	target := p.w.ups.onNode(r.Report.Target, p.w.vmIP)
	r.OnTarget = marks.Tally(target, peer, dscp, sw, time.Time{})
	if !r.OnTarget.FirstMarked.IsZero() {
		r.FirstMarkedOnTarget = r.OnTarget.FirstMarked.Sub(sw)
	}
	if first, ok := marks.First(target, peer, -1, sw); ok {
		r.FirstPacketOnTarget = first.At.Sub(sw)
	}
	joined, left := rec.Times(r.TargetLSP)
	r.TargetInGroup, r.TargetLeftGroup = lifeprobe.Since(sw, joined), lifeprobe.Since(sw, left)
	if at, ok := p.e.clock.At(r.TargetLSP); ok {
		r.TargetLSPInNB = at.Sub(sw)
		if !r.OnTarget.FirstMarked.IsZero() {
			r.LSPToMarked = r.OnTarget.FirstMarked.Sub(at)
		}
	}
	if !p.split {
		return
	}
	ph := &lifeprobe.MigrationPhases{SplitAt: p.at,
		Switch:   lifeprobe.Phase{Out: p.out, In: p.rx, Marking: marks.Tally(all, peer, dscp, start, p.at)},
		Handover: lifeprobe.Phase{Out: r.Out, In: r.In, Marking: marks.Tally(all, peer, dscp, p.at, time.Time{})}}
	srcJoined, srcLeft := rec.Times(r.SourceLSP)
	dstJoined, _ := rec.Times(r.TargetLSP)
	ph.NameInGroup = lifeprobe.Since(r.Report.HandoverAt, dstJoined)
	if !dstJoined.IsZero() && !srcLeft.IsZero() {
		ph.GroupGap = dstJoined.Sub(srcLeft)
	}
	// The shared row was in the group under the source pod's name first.
	r.TargetInGroup = lifeprobe.Since(sw, srcJoined)
	r.Out, r.In = lifeprobe.Sum(p.out, r.Out), lifeprobe.Sum(p.rx, r.In)
	r.Phases = ph
}
