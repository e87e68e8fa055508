package localnetenv

import (
	"context"
	"fmt"
	"net/netip"
	"time"

	"github.com/nqos/nqos/harness/lifeprobe"
	"github.com/nqos/nqos/harness/marks"
	"github.com/nqos/nqos/scenarios"

	"github.com/nqos/nqos/topo/localnet"
)

// daemonRestarter is what restartDaemonUnderTraffic needs of the
// testbed; *localnet.Testbed implements it.
type daemonRestarter interface {
	RestartDaemon(ctx context.Context, node, daemon string, mode localnet.RestartMode) error
	WaitHVSync(ctx context.Context) error
}

// policedFlow is constant-rate traffic through a meter, sent by the
// caller from the stream's source, counted at the same uplink.
type policedFlow struct {
	Dst  netip.Addr
	DSCP int
	// FrameBits is the untagged Ethernet frame size of each packet in
	// bits (what the OVS meter counts).
	FrameBits float64
	// Since is when the flow reached its steady state (the meter's
	// initial full bucket drained); no window starts earlier.
	Since time.Time
}

// daemonRestartSpec is one daemon restart under traffic.
type daemonRestartSpec struct {
	Node, Daemon string
	Mode         localnet.RestartMode
	// Marked is the running marked stream whose gap is measured.
	Marked *markedStream
	// Policed, if set, is measured before the restart and after recovery.
	Policed *policedFlow
	// Window is the length of the baseline before the restart and of the
	// steady state measured after recovery (default 2 s).
	Window time.Duration
	// Timeout bounds recovery (default 30 s).
	Timeout time.Duration
}

// daemonNames maps a scenario daemon to the testbed's name.
var daemonNames = map[string]string{
	scenarios.DaemonOVNController: localnet.DaemonOVNController,
	scenarios.DaemonVSwitchd:      localnet.DaemonVSwitchd,
	scenarios.DaemonNB:            localnet.DaemonNB,
}

// RestartDaemon restarts a daemon while the VM sends
// a marked UDP stream (500/s) to the peer, watched on its node's uplink.
func (e *testbedEnv) RestartDaemon(ctx context.Context, r *scenarios.RestartDaemon, vm *scenarios.VM, p *scenarios.Probe) (lifeprobe.Outcome, error) {
	s, err := e.probeStream(ctx, vm, p)
	if err != nil {
		return lifeprobe.Outcome{}, err
	}
	res, err := restartDaemonUnderTraffic(ctx, e.tb, daemonRestartSpec{Node: e.nodeName(r.Node),
		Daemon: daemonNames[r.Daemon], Mode: localnet.RestartMode(r.Mode), Marked: s})
	sr := s.Stop()
	if err != nil {
		return lifeprobe.Outcome{}, err
	}
	return res.Outcome(sr), nil
}

// restartDaemonUnderTraffic measures a baseline window of the running
// streams, restarts the daemon, waits until marking is steady again and
// the chassis are in sync, then measures a steady window after recovery.
func restartDaemonUnderTraffic(ctx context.Context, tb daemonRestarter, spec daemonRestartSpec) (lifeprobe.DaemonRestart, error) {
	if spec.Window == 0 {
		spec.Window = 2 * time.Second
	}
	if spec.Timeout == 0 {
		spec.Timeout = 30 * time.Second
	}
	res := lifeprobe.DaemonRestart{Node: spec.Node, Daemon: spec.Daemon, Mode: string(spec.Mode)}
	s := spec.Marked
	perWindow := int(spec.Window / s.Spec().Interval / 2) // at least half the nominal packets
	if _, err := s.WaitMarkedRun(ctx, time.Now().Add(-spec.Window), perWindow, spec.Timeout); err != nil {
		return res, fmt.Errorf("%s %s: baseline: %w", spec.Node, spec.Daemon, err)
	}
	res.RestartAt = time.Now()
	if err := tb.RestartDaemon(ctx, spec.Node, spec.Daemon, spec.Mode); err != nil {
		return res, err
	}
	res.Restart = time.Since(res.RestartAt)
	runStart, err := s.WaitMarkedRun(ctx, res.RestartAt, perWindow, spec.Timeout)
	if err != nil {
		return res, fmt.Errorf("%s %s restarted: marking did not resume: %w", spec.Node, spec.Daemon, err)
	}
	if err := tb.WaitHVSync(ctx); err != nil {
		return res, fmt.Errorf("%s %s restarted: %w", spec.Node, spec.Daemon, err)
	}
	afterFrom := time.Now()
	if _, err := s.WaitMarkedRun(ctx, afterFrom, perWindow, spec.Timeout); err != nil {
		return res, fmt.Errorf("%s %s restarted: steady window: %w", spec.Node, spec.Daemon, err)
	}
	end := time.Now()
	res.Recovered = runStart.Sub(res.RestartAt)
	res.Baseline = s.Marks(res.RestartAt.Add(-spec.Window), res.RestartAt)
	res.Marks = s.Marks(res.RestartAt, end)
	res.After = s.Marks(afterFrom, end)
	if p := spec.Policed; p != nil {
		seen := s.Seen()
		from := res.RestartAt.Add(-spec.Window)
		if p.Since.After(from) {
			from = p.Since
		}
		res.PolicedBefore = marks.BitsPerSecond(seen, p.Dst, p.DSCP, p.FrameBits, from, res.RestartAt)
		res.PolicedAfter = marks.BitsPerSecond(seen, p.Dst, p.DSCP, p.FrameBits, afterFrom, end)
	}
	return res, nil
}
