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

// markedStream is a constant-rate one-way UDP stream from a VM to a host
// whose marking (DSCP dscp) is watched at the sending node's uplink.
type markedStream struct {
	name     string
	src, dst netip.Addr
	dscp     int
	probe    *localnet.Probe
	watch    *live.Watch
	start    time.Time
}

// streamInterval is the time between a stream's datagrams (500/s).
const streamInterval = 2 * time.Millisecond

// markedRun is how many marked packets in a row make a stream's marking
// steady over window: half its nominal packets.
func markedRun(window time.Duration) int { return int(window / streamInterval / 2) }

// Seen returns every packet of the stream's source seen on the uplink.
func (s *markedStream) Seen() []capture.Packet { return s.watch.Packets(s.src) }

// Marks analyses the stream's packets in [from, to).
func (s *markedStream) Marks(from, to time.Time) marks.Count {
	return marks.Tally(s.Seen(), s.dst, s.dscp, from, to)
}

// WaitMarkedRun waits until the stream has a run of n consecutive marked
// packets, all seen after t; it returns when the run started.
func (s *markedStream) WaitMarkedRun(ctx context.Context, t time.Time, n int, timeout time.Duration) (time.Time, error) {
	var runStart time.Time
	what := fmt.Sprintf("stream %s: %d consecutive packets with DSCP %d", s.name, n, s.dscp)
	err := poll.Until(ctx, timeout, 50*time.Millisecond, what, func(context.Context) (bool, error) {
		run := 0
		for _, p := range s.Seen() {
			if p.Dst != s.dst || p.At.Before(t) {
				continue
			}
			if p.DSCP != s.dscp {
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
			return false, fmt.Errorf("stream %s: %w", s.name, err)
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
	if p, ok := marks.First(s.Seen(), s.dst, s.dscp, s.start); ok {
		first = p.At
	}
	m := s.Marks(first, end)
	s.watch.Close()
	return lifeprobe.Stream{Name: s.name, Sent: pr.Sent, Received: pr.Received, Lost: pr.Lost,
		LongestReceiveGap: pr.LongestGap, Marks: m}
}

// probePort is the UDP port of a VM's marked probe stream.
const probePort = 7300

// probeStream starts the VM's marked stream to the probe's peer: it
// starts watching the uplink, then sending.
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
	s := &markedStream{name: vm.Name + "->" + p.Peer, src: src.Addr(), dst: dst, dscp: p.DSCP}
	if s.watch, err = live.StartWatch(wns, wif); err != nil {
		return nil, fmt.Errorf("stream %s: %w", s.name, err)
	}
	s.probe, err = localnet.StartProbe(ctx, in.Netns, netip.AddrPortFrom(s.src, probePort), host.Netns, netip.AddrPortFrom(dst, probePort), streamInterval)
	if err != nil {
		s.watch.Close()
		return nil, fmt.Errorf("stream %s: %w", s.name, err)
	}
	s.start = time.Now()
	return s, nil
}
