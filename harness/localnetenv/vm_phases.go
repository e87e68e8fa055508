package localnetenv

import (
	"context"
	"time"

	"github.com/nqos/nqos/harness/lifeprobe"
	"github.com/nqos/nqos/harness/marks"

	"github.com/nqos/nqos/kubevirt"
)

// phaseStartDatagrams is how many datagrams per direction each phase's
// probes must have delivered around the split: the switch is over before
// the first phase ends, and the second phase's probes run before the
// handover starts.
const phaseStartDatagrams = 50

// phaseSplit is the probe session of a migration: it restarts the probes
// of a multi-chassis one at the handover (kubevirt's BeforeHandover) and
// computes the figures at the end.
type phaseSplit struct {
	e    *testbedEnv
	w    *watched
	in   kubevirt.Instance
	peer string

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
	s, err := p.e.startSession(ctx, p.in.Netns, p.in.NICs[0], p.w.vmIP, p.peer, true)
	if err != nil {
		return err
	}
	p.w.session = s
	return s.waitMore(ctx, phaseStartDatagrams)
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
