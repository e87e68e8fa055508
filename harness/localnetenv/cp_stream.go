package localnetenv

import (
	"context"
	"fmt"
	"net/netip"
	"strings"
	"time"

	"github.com/nqos/nqos/capture"
	"github.com/nqos/nqos/capture/live"
	"github.com/nqos/nqos/harness/lifeprobe"
	"github.com/nqos/nqos/harness/marks"
	"github.com/nqos/nqos/internal/poll"
	"github.com/nqos/nqos/scenarios"

	"github.com/nqos/nqos/topo/localnet"
)

// streamSpec is a constant-rate one-way UDP stream from a VM to a host
// whose marking is watched at the sending node's uplink.
type streamSpec struct {
	Name     string
	SrcNetns string
	Src      netip.AddrPort
	DstNetns string
	Dst      netip.AddrPort
	// Interval between datagrams (default 2 ms, 500/s).
	Interval time.Duration
	// DSCP the stream must carry on the wire.
	DSCP int
	// WatchNetns and WatchIf are the uplink capture point of the
	// sending node (localnet.Testbed.UplinkCapturePoint).
	WatchNetns, WatchIf string
}

// markedStream is a running streamSpec.
type markedStream struct {
	spec  streamSpec
	probe *localnet.Probe
	watch *live.Watch
	start time.Time
}

// startStream starts watching the uplink, then sending.
func startStream(ctx context.Context, spec streamSpec) (*markedStream, error) {
	if spec.Interval == 0 {
		spec.Interval = 2 * time.Millisecond
	}
	w, err := live.StartWatch(spec.WatchNetns, spec.WatchIf)
	if err != nil {
		return nil, fmt.Errorf("stream %s: %w", spec.Name, err)
	}
	p, err := localnet.StartProbe(ctx, spec.SrcNetns, spec.Src, spec.DstNetns, spec.Dst, spec.Interval)
	if err != nil {
		w.Close()
		return nil, fmt.Errorf("stream %s: %w", spec.Name, err)
	}
	return &markedStream{spec: spec, probe: p, watch: w, start: time.Now()}, nil
}

// Spec is the stream's spec with defaults filled in.
func (s *markedStream) Spec() streamSpec { return s.spec }

// Seen returns every packet of the stream's source seen on the uplink.
func (s *markedStream) Seen() []capture.Packet { return s.watch.Packets(s.spec.Src.Addr()) }

// Marks analyses the stream's packets in [from, to).
func (s *markedStream) Marks(from, to time.Time) marks.Count {
	return marks.Tally(s.Seen(), s.spec.Dst.Addr(), s.spec.DSCP, from, to)
}

// WaitMarkedRun waits until the stream has a run of n consecutive marked
// packets, all seen after t; it returns when the run started.
func (s *markedStream) WaitMarkedRun(ctx context.Context, t time.Time, n int, timeout time.Duration) (time.Time, error) {
	var runStart time.Time
	what := fmt.Sprintf("stream %s: %d consecutive packets with DSCP %d", s.spec.Name, n, s.spec.DSCP)
	err := poll.Until(ctx, timeout, 50*time.Millisecond, what, func(context.Context) (bool, error) {
		run := 0
		for _, p := range s.Seen() {
			if p.Dst != s.spec.Dst.Addr() || p.At.Before(t) {
				continue
			}
			if p.DSCP != s.spec.DSCP {
				run = 0
				continue
			}
			if run == 0 {
				runStart = p.At
			}
			if run++; run >= n {
				return true, nil
			}
		}
		if err := s.watch.Err(); err != nil {
			return false, fmt.Errorf("stream %s: %w", s.spec.Name, err)
		}
		return false, nil
	})
	return runStart, err
}

// Stop ends the stream and returns its result; marks are counted from
// the first marked packet on.
func (s *markedStream) Stop() lifeprobe.Stream {
	end := time.Now()
	pr := s.probe.Stop()
	first := s.start
	if p, ok := marks.First(s.Seen(), s.spec.Dst.Addr(), s.spec.DSCP, s.start); ok {
		first = p.At
	}
	m := s.Marks(first, end)
	s.watch.Close()
	return lifeprobe.Stream{Name: s.spec.Name, Sent: pr.Sent, Received: pr.Received, Lost: pr.Lost,
		LongestReceiveGap: pr.LongestGap, Marks: m}
}

// probePort is the UDP port of a VM's marked probe stream.
const probePort = 7300

// probeStream starts the VM's marked stream to the probe's peer.
func (e *testbedEnv) probeStream(ctx context.Context, vm *scenarios.VM, p *scenarios.Probe) (*markedStream, error) {
	in, err := e.vms.Get(vm.Namespace, vm.Name)
	if err != nil {
		return nil, err
	}
	host, ok := e.tb.Host(p.Peer)
	if !ok || host.IPv4 == "" {
		return nil, fmt.Errorf("probe peer %s: no such host with an IPv4 address on the testbed", p.Peer)
	}
	wns, wif, err := e.tb.UplinkCapturePoint(in.Node)
	if err != nil {
		return nil, err
	}
	src, err := netip.ParsePrefix(vm.Addresses.V4)
	if err != nil {
		return nil, fmt.Errorf("VM %s: address %q: %w", vm.Name, vm.Addresses.V4, err)
	}
	dst, err := netip.ParseAddr(strings.Split(host.IPv4, "/")[0])
	if err != nil {
		return nil, fmt.Errorf("host %s: address %q: %w", p.Peer, host.IPv4, err)
	}
	return startStream(ctx, streamSpec{Name: vm.Name + "->" + p.Peer, SrcNetns: in.Netns,
		Src: netip.AddrPortFrom(src.Addr(), probePort), DstNetns: host.Netns, Dst: netip.AddrPortFrom(dst, probePort),
		DSCP: p.DSCP, WatchNetns: wns, WatchIf: wif})
}
