package localnetenv

import (
	"context"
	"fmt"
	"time"

	"github.com/nqos/nqos/harness/lifeprobe"
	"github.com/nqos/nqos/scenarios"

	"github.com/nqos/nqos/topo/localnet"
)

// daemonWindow is the length of the baseline before a daemon restart and
// of the steady state measured after recovery; daemonTimeout bounds
// recovery.
const (
	daemonWindow  = 2 * time.Second
	daemonTimeout = 30 * time.Second
)

// daemonNames maps a scenario daemon to the testbed's name.
var daemonNames = map[string]string{
	scenarios.DaemonOVNController: localnet.DaemonOVNController,
	scenarios.DaemonVSwitchd:      localnet.DaemonVSwitchd,
	scenarios.DaemonNB:            localnet.DaemonNB,
}

// RestartDaemon restarts a daemon while the VM sends a marked UDP
// stream (500/s) to the peer, watched on its node's uplink: it measures
// a baseline window of the stream, restarts the daemon, waits until
// marking is steady again and the chassis are in sync, then measures a
// steady window after recovery.
func (e *testbedEnv) RestartDaemon(ctx context.Context, r *scenarios.RestartDaemon, vm *scenarios.VM, p *scenarios.Probe) (lifeprobe.Outcome, error) {
	s, err := e.probeStream(ctx, vm, p)
	if err != nil {
		return lifeprobe.Outcome{}, err
	}
	res, err := e.restartDaemon(ctx, e.nodeName(r.Node), daemonNames[r.Daemon], localnet.RestartMode(r.Mode), s)
	sr := s.Stop()
	if err != nil {
		return lifeprobe.Outcome{}, err
	}
	return res.Outcome(sr), nil
}

// restartDaemon restarts daemon on node under the running stream s and
// measures it (see RestartDaemon).
func (e *testbedEnv) restartDaemon(ctx context.Context, node, daemon string, mode localnet.RestartMode, s *markedStream) (lifeprobe.DaemonRestart, error) {
	res := lifeprobe.DaemonRestart{Node: node, Daemon: daemon, Mode: string(mode)}
	perWindow := markedRun(daemonWindow)
	if _, err := s.WaitMarkedRun(ctx, time.Now().Add(-daemonWindow), perWindow, daemonTimeout); err != nil {
		return res, fmt.Errorf("%s %s: baseline: %w", node, daemon, err)
	}
	res.RestartAt = time.Now()
	if err := e.tb.RestartDaemon(ctx, node, daemon, mode); err != nil {
		return res, err
	}
	res.Restart = time.Since(res.RestartAt)
	runStart, err := s.WaitMarkedRun(ctx, res.RestartAt, perWindow, daemonTimeout)
	if err != nil {
		return res, fmt.Errorf("%s %s restarted: marking did not resume: %w", node, daemon, err)
	}
	if err := e.tb.WaitHVSync(ctx); err != nil {
		return res, fmt.Errorf("%s %s restarted: %w", node, daemon, err)
	}
	afterFrom := time.Now()
	if _, err := s.WaitMarkedRun(ctx, afterFrom, perWindow, daemonTimeout); err != nil {
		return res, fmt.Errorf("%s %s restarted: steady window: %w", node, daemon, err)
	}
	end := time.Now()
	res.Recovered = runStart.Sub(res.RestartAt)
	res.Baseline = s.Marks(res.RestartAt.Add(-daemonWindow), res.RestartAt)
	res.Marks = s.Marks(res.RestartAt, end)
	res.After = s.Marks(afterFrom, end)
	return res, nil
}
