package localnetenv

import (
	"context"
	"net/netip"
	"time"

	"github.com/nqos/nqos/harness/lifeprobe"
	"github.com/nqos/nqos/harness/marks"

	"github.com/nqos/nqos/kubevirt"
)

// migratePhases splits a multi-chassis migration at the handover of its
// LSP to the target pod. The probes are restarted between the phases
// (once the binding has settled on the target, before the handover), so
// each phase counts its own datagrams.
type migratePhases struct {
	// Switch: from the start to the binding settled on the target alone
	// (guest moved, RARPs, source chassis released).
	Switch phase `json:"switch"`
	// Handover: from the LSP rename and VIF re-point to the end.
	Handover phase `json:"handover"`
	// SplitAt is the boundary: the first phase's probes stopped, the
	// second's not started yet.
	SplitAt time.Time `json:"splitAt"`
	// NameInGroup: the port seen in the object's port group under the
	// target pod's name, relative to the handover's start.
	NameInGroup time.Duration `json:"nameInGroupNs"`
	// GroupGap: that sighting minus the last sighting under the source
	// pod's name (0: the same sample, the row never left the group).
	GroupGap time.Duration `json:"groupGapNs"`
}

// phase is what the probes and the uplink watches saw in one phase.
type phase struct {
	Out lifeprobe.Direction `json:"out"`
	In  lifeprobe.Direction `json:"in"`
	// Marking counts the guest's packets to the peer on both uplinks.
	Marking marks.Count `json:"marking"`
}

// phaseStartDatagrams is how many datagrams per direction each phase's
// probes must have delivered around the split: the switch is over before
// the first phase ends, and the second phase's probes run before the
// handover starts.
const phaseStartDatagrams = 50

// phaseSplit restarts the probes of a multi-chassis migration at the
// handover (kubevirt's BeforeHandover).
type phaseSplit struct {
	o    *vmOps
	w    *watched
	in   kubevirt.Instance
	vmIP netip.Addr
	tr   probeTraffic

	split   bool
	at      time.Time
	out, rx lifeprobe.Direction // first phase
}

// atHandover ends the first phase's probes and starts the second's.
func (p *phaseSplit) atHandover(ctx context.Context, _ kubevirt.MigrationReport) error {
	if err := p.w.waitMore(ctx, phaseStartDatagrams); err != nil {
		return err
	}
	p.out, p.rx = p.w.session.stop()
	p.at, p.split = time.Now(), true
	s, err := p.o.startSession(ctx, p.in.Netns, p.in.NICs[0], p.vmIP, p.tr, true)
	if err != nil {
		return err
	}
	p.w.session = s
	return s.waitMore(ctx, phaseStartDatagrams)
}

// fill sets r.Phases from the two phases and makes r.Out and r.In the
// sums over both; r.Out and r.In hold the second phase when called.
func (p *phaseSplit) fill(r *migrateResult, dscp int, start time.Time, rec *memberRecorder) {
	if !p.split {
		return
	}
	all := p.w.ups.seen(p.vmIP)
	peer := p.w.peerIP
	ph := &migratePhases{SplitAt: p.at,
		Switch:   phase{Out: p.out, In: p.rx, Marking: marks.Tally(all, peer, dscp, start, p.at)},
		Handover: phase{Out: r.Out, In: r.In, Marking: marks.Tally(all, peer, dscp, p.at, time.Time{})}}
	srcJoined, srcLeft := rec.Times(r.SourceLSP)
	dstJoined, _ := rec.Times(r.TargetLSP)
	ph.NameInGroup = lifeprobe.Since(r.Report.HandoverAt, dstJoined)
	if !dstJoined.IsZero() && !srcLeft.IsZero() {
		ph.GroupGap = dstJoined.Sub(srcLeft)
	}
	// The shared row was in the group under the source pod's name first.
	r.TargetInGroup = lifeprobe.Since(r.Report.SwitchAt, srcJoined)
	r.Out, r.In = lifeprobe.Sum(p.out, r.Out), lifeprobe.Sum(p.rx, r.In)
	r.Phases = ph
}
