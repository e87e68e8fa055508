package localnetenv

import (
	"context"
	"fmt"
	"net/netip"
	"time"

	"github.com/nqos/nqos/harness"
	"github.com/nqos/nqos/harness/marks"
	"github.com/nqos/nqos/harness/results"

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

// daemonRestartResult is what a daemon restart did to the traffic.
type daemonRestartResult struct {
	Node      string    `json:"node"`
	Daemon    string    `json:"daemon"`
	Mode      string    `json:"mode"`
	RestartAt time.Time `json:"restartAt"`
	// Restart is how long RestartDaemon took (stop + start).
	Restart time.Duration `json:"restartNs"`
	// Recovered is from the restart to the first packet of a steady run
	// of marked packets.
	Recovered time.Duration `json:"recoveredNs"`
	// Marks covers the restart to the end of the steady window: its Gap
	// (longest time without a marked packet) is the measured outage.
	Marks marks.Count `json:"marks"`
	// Baseline is the same analysis of the window before the restart.
	Baseline marks.Count `json:"baseline"`
	// After is the steady window after recovery.
	After marks.Count `json:"after"`
	// PolicedBefore and PolicedAfter are the policed flow's delivered
	// rates (bit/s at the uplink) before the restart and after recovery.
	PolicedBefore float64 `json:"policedBeforeBps,omitempty"`
	PolicedAfter  float64 `json:"policedAfterBps,omitempty"`
}

// restartDaemonUnderTraffic measures a baseline window of the running
// streams, restarts the daemon, waits until marking is steady again and
// the chassis are in sync, then measures a steady window after recovery.
func restartDaemonUnderTraffic(ctx context.Context, tb daemonRestarter, spec daemonRestartSpec) (daemonRestartResult, error) {
	if spec.Window == 0 {
		spec.Window = 2 * time.Second
	}
	if spec.Timeout == 0 {
		spec.Timeout = 30 * time.Second
	}
	res := daemonRestartResult{Node: spec.Node, Daemon: spec.Daemon, Mode: string(spec.Mode)}
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

// life is the daemon restart as a lifecycle step's result, with the
// whole stream's loss.
func (res daemonRestartResult) life(sr streamResult) harness.LifeResult {
	return harness.LifeResult{
		Packets: res.Marks.Packets, Unmarked: res.Marks.Unmarked, Gap: res.Marks.Gap,
		Lost: map[string]int{harness.Out: sr.Lost}, Sent: map[string]int{harness.Out: sr.Sent},
		Measures: []results.Measure{
			measure("restart (stop + start)", res.Restart),
			measure("restart → steady marking again", res.Recovered),
			measure("marking gap (longest time without a marked packet)", res.Marks.Gap),
			counted("probe packets unmarked around the restart", res.Marks.Unmarked, "packets"),
			counted("probe datagrams lost over the whole stream", sr.Lost, "datagrams"),
		},
		Detail: map[string]any{"restart": res, "stream": sr},
	}
}
