package cplife

import (
	"context"
	"net/netip"
	"testing"
	"time"

	"github.com/nqos/nqos/kubevirt"
	"github.com/nqos/nqos/topo/localnet"
)

// Policed flow of the daemon test: 12 Mbit/s of 1000-byte UDP payloads
// offered against a 4 Mbit/s, 400 kbit meter.
const (
	policedRateKbps   = 4000
	policedBurstKbits = 400
	policedPayload    = 1000
	policedFrameBits  = (policedPayload + 8 + 20 + 14) * 8
)

// startPolicedFlow runs iperf3 UDP from the VM to host:5201 until the
// test ends.
func (e *env) startPolicedFlow(vmName string, host localnet.Host) {
	e.t.Helper()
	ctx, cancel := context.WithCancel(e.ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		_, _ = e.tb.Exec(ctx, e.tb.GuestNetns(kubevirt.GuestName(vmNamespace, vmName)), "iperf3", "-c", host.IPv4, "-p", "5201",
			"-u", "-b", "12M", "-l", "1000", "-t", "300", "-J")
	}()
	e.t.Cleanup(func() { cancel(); <-done })
}

// waitPoliced waits for the policed flow's first packet at the uplink
// and for a second of marked stream after the meter's initial burst
// (500 ms); it returns the start of the steady state.
func waitPoliced(t *testing.T, s *Stream, p *PolicedFlow) time.Time {
	t.Helper()
	var first time.Time
	err := pollEvery(context.Background(), 20*time.Second, 50*time.Millisecond, "policed flow at the uplink", func() (bool, error) {
		var ok bool
		first, ok = firstMarked(s.Seen(), p.Dst, p.DSCP, time.Time{})
		return ok, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	steady := first.Add(500 * time.Millisecond)
	if _, err := s.WaitMarkedRun(context.Background(), steady, 500, 30*time.Second); err != nil {
		t.Fatal(err)
	}
	return steady
}

// Scenario 5: ovn-controller, ovs-vswitchd and the NB ovsdb-server are
// restarted (SIGKILL) under constant-rate marked and policed traffic.
// Marking and policing must resume; the gap is measured and reported.
// Expected (testbed-findings): no loss for ovn-controller (with
// ovn-ofctrl-wait-before-clear) and the NB, about 1 s for ovs-vswitchd.
func TestDaemonRestartsUnderTraffic(t *testing.T) {
	e := newEnv(t, "p2", nil)
	e.vm("vm-a", 0, "gold", defaultNAD, "10.20.1.1/16", mac(1))
	backup, monitor := e.host("backup"), e.host("monitor")
	e.apply(NetworkQoSSpec{Namespace: vmNamespace, Name: "gold", Priority: 50, Pods: map[string]string{"tier": "gold"},
		NADLabels: blueLabels, Rules: []RuleSpec{
			{DSCP: 46, CIDRs: []string{backup.IPv4 + "/32"}},
			{DSCP: 10, CIDRs: []string{monitor.IPv4 + "/32"}, RateKbps: policedRateKbps, BurstKbits: policedBurstKbits},
		}})
	e.startController()
	e.converge("initial")
	if err := e.tb.WaitHVSync(e.ctx); err != nil {
		t.Fatal(err)
	}
	s := e.stream("vm-a", 0, "10.20.1.1/16", backup, 7100, 46)
	e.startPolicedFlow("vm-a", monitor)
	policed := &PolicedFlow{Dst: netip.MustParseAddr(monitor.IPv4), DSCP: 10, FrameBits: policedFrameBits}
	policed.Since = waitPoliced(t, s, policed)
	node := e.node(0)
	cases := []struct {
		daemon string
		// maxGap bounds the outage; 0 means none is expected.
		maxGap time.Duration
	}{
		{localnet.DaemonOVNController, 0},
		{localnet.DaemonNB, 0},
		{localnet.DaemonVSwitchd, 10 * time.Second},
	}
	for _, c := range cases {
		res, err := RestartDaemonUnderTraffic(e.ctx, e.tb, DaemonRestartSpec{Node: node, Daemon: c.daemon, Mode: localnet.RestartKill,
			Marked: s, Policed: policed})
		if err != nil {
			t.Fatalf("%s: %v", c.daemon, err)
		}
		logJSON(t, "restart "+c.daemon, res)
		t.Logf("%s: gap %v (baseline %v), %d unmarked, recovered after %v, policed %.2f -> %.2f Mbit/s",
			c.daemon, res.Marks.Gap, res.Baseline.Gap, res.Marks.Unmarked, res.Recovered, res.PolicedBefore/1e6, res.PolicedAfter/1e6)
		checkDaemonRestart(t, c.daemon, res, c.maxGap)
	}
}

// checkDaemonRestart: marking and policing resume; where no outage is
// expected, no packet goes unmarked and the gap stays within maxMarkGap.
func checkDaemonRestart(t *testing.T, daemon string, res DaemonRestartResult, maxGap time.Duration) {
	t.Helper()
	if res.After.Marked == 0 || res.After.Unmarked != 0 {
		t.Errorf("%s: after recovery %d marked, %d unmarked packets; want all marked", daemon, res.After.Marked, res.After.Unmarked)
	}
	if maxGap == 0 {
		maxGap = maxMarkGap
		if res.Marks.Unmarked != 0 {
			t.Errorf("%s: %d unmarked packets around the restart, want 0", daemon, res.Marks.Unmarked)
		}
	}
	if res.Marks.Gap > maxGap {
		t.Errorf("%s: marking gap %v (from %s), want <= %v", daemon, res.Marks.Gap, res.Marks.GapStart.Format(time.RFC3339Nano), maxGap)
	}
	rate := float64(policedRateKbps * 1000)
	window := res.After.To.Sub(res.After.From).Seconds()
	hi := 1.1*rate + policedBurstKbits*1000/window
	for name, got := range map[string]float64{"before": res.PolicedBefore, "after": res.PolicedAfter} {
		if got < 0.7*rate || got > hi {
			t.Errorf("%s: policed flow %s the restart delivered %.2f Mbit/s, want %.2f..%.2f", daemon, name, got/1e6, 0.7*rate/1e6, hi/1e6)
		}
	}
}
