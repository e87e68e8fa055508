package localnetenv

import (
	"context"
	"time"

	"github.com/nqos/nqos/harness/lifeprobe"

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
