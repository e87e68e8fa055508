package localnetenv

import (
	"context"
	"fmt"
	"net/netip"
	"sync"
	"time"

	"github.com/nqos/nqos/harness/lifeprobe"
	"github.com/nqos/nqos/kubevirt"
	"github.com/nqos/nqos/scenarios"
	"github.com/nqos/nqos/topo/localnet"
)

// The constant-rate UDP probes of an operation: one datagram every 2 ms
// per direction (500/s) to and from the peer host; probeAfter datagrams
// must arrive per direction after the operation before they stop, and
// probeTimeout bounds each wait of the operation.
const (
	probeInterval = 2 * time.Millisecond
	probeAfter    = 200
	probeTimeout  = 20 * time.Second
	probePortOut  = 7201
	probePortIn   = 7202
)

// session is a probe stream from a guest to a peer host and, optionally,
// back.
type session struct {
	vmIP    netip.Addr
	peerIP  netip.Addr
	out, in *localnet.Probe
}

// pinNeighbour installs a permanent neighbour entry for the peer in the
// guest, so the first datagrams after a (re)plug do not wait for an ARP
// retry (1 s) that has nothing to do with QoS.
func (e *testbedEnv) pinNeighbour(ctx context.Context, netns, nic string, peer localnet.Host, peerIP netip.Addr) error {
	mac, err := e.tb.LinkMAC(peer.Netns, peer.Ifname)
	if err != nil {
		return err
	}
	_, err = e.tb.Exec(ctx, netns, "ip", "neigh", "replace", peerIP.String(), "lladdr", mac.String(), "dev", nic, "nud", "permanent")
	if err != nil {
		return fmt.Errorf("neighbour %s in %s: %w", peerIP, netns, err)
	}
	return nil
}

// startSession starts the guest -> peer probe and, with both, the
// peer -> guest probe.
func (e *testbedEnv) startSession(ctx context.Context, netns, nic string, vmIP netip.Addr, peerName string, both bool) (*session, error) {
	peer, peerIP, err := e.host(peerName)
	if err != nil {
		return nil, err
	}
	if err := e.pinNeighbour(ctx, netns, nic, peer, peerIP); err != nil {
		return nil, err
	}
	s := &session{vmIP: vmIP, peerIP: peerIP}
	s.out, err = localnet.StartProbe(ctx, netns, netip.AddrPortFrom(vmIP, probePortOut), peer.Netns, netip.AddrPortFrom(peerIP, probePortOut), probeInterval)
	if err != nil {
		return nil, fmt.Errorf("probe %s -> %s: %w", vmIP, peerIP, err)
	}
	if both {
		s.in, err = localnet.StartProbe(ctx, peer.Netns, netip.AddrPortFrom(peerIP, probePortIn), netns, netip.AddrPortFrom(vmIP, probePortIn), probeInterval)
		if err != nil {
			s.out.Stop()
			return nil, fmt.Errorf("probe %s -> %s: %w", peerIP, vmIP, err)
		}
	}
	return s, nil
}

// watched is a probe session with DSCP watches on node uplinks.
type watched struct {
	*session
	ups *uplinks
}

// vmSession watches the uplinks of a running VM's node and of nodes,
// then starts the VM's probe session: lsp is set to the VM's first LSP
// before the session starts, so a failed result names it.
func (e *testbedEnv) vmSession(ctx context.Context, vm vmID, lsp *string, peer string, both bool, nodes ...string) (kubevirt.Instance, *watched, error) {
	in, vmIP, err := e.instance(vm)
	if err != nil {
		return in, nil, err
	}
	*lsp = in.LSPs[0]
	ups, err := e.watchUplinks(append([]string{in.Node}, nodes...)...)
	if err != nil {
		return in, nil, err
	}
	s, err := e.startSession(ctx, in.Netns, in.NICs[0], vmIP, peer, both)
	if err != nil {
		ups.Close()
		return in, nil, err
	}
	return in, &watched{session: s, ups: ups}, nil
}

// close stops the probes and the watches.
func (w *watched) close() {
	w.stop()
	w.ups.Close()
}

// finish stops the probes and returns out (guest -> peer) and in; it
// fails when an uplink watch stopped recording before.
func (w *watched) finish() (out, in lifeprobe.Direction, err error) {
	out, in = w.stop()
	return out, in, w.ups.err()
}

// end lets the probes deliver probeAfter more datagrams, stops
// them and then the membership recorder; out is guest -> peer.
func (w *watched) end(ctx context.Context, rec *memberRecorder) (out, in lifeprobe.Direction, err error) {
	if err := w.waitMore(ctx, probeAfter); err != nil {
		return out, in, err
	}
	if out, in, err = w.finish(); err != nil {
		return out, in, err
	}
	return out, in, rec.stop()
}

// waitMore waits until every running probe received n more datagrams
// than it had when called.
func (s *session) waitMore(ctx context.Context, n int) error {
	for _, p := range []*localnet.Probe{s.out, s.in} {
		if p == nil {
			continue
		}
		want := p.Received() + n
		err := localnet.Poll(ctx, probeTimeout, fmt.Sprintf("%d more probe datagrams (%s <-> %s)", n, s.vmIP, s.peerIP),
			func(context.Context) (bool, error) { return p.Received() >= want, nil })
		if err != nil {
			return err
		}
	}
	return nil
}

// stop ends both probes and returns out (guest -> peer) and in.
func (s *session) stop() (out, in lifeprobe.Direction) {
	out = direction(s.out.Stop())
	if s.in != nil {
		in = direction(s.in.Stop())
	}
	return out, in
}

// memberRecorder samples an object's port-group membership and records
// when each LSP was first seen in it and, after that, first seen out of it.
type memberRecorder struct {
	*lifeprobe.Membership
	mu     sync.Mutex
	err    error // the NB read that ended the sampling
	cancel context.CancelFunc
	done   chan struct{}
}

// memberSample is the sampling period of a memberRecorder.
const memberSample = 5 * time.Millisecond

func (e *testbedEnv) recordMembers(ctx context.Context, m *scenarios.Manifest) *memberRecorder {
	ctx, cancel := context.WithCancel(ctx)
	r := &memberRecorder{Membership: lifeprobe.NewMembership(), cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(r.done)
		t := time.NewTicker(memberSample)
		defer t.Stop()
		for {
			members, err := e.members(ctx, m)
			if err != nil {
				if ctx.Err() == nil {
					r.mu.Lock()
					r.err = err
					r.mu.Unlock()
				}
				return
			}
			r.Observe(members, time.Now())
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
		}
	}()
	return r
}

// stop ends the sampling; the error is the NB read that ended it early.
func (r *memberRecorder) stop() error {
	r.cancel()
	<-r.done
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.err
}

// direction is a probe's result as one direction of the session.
func direction(r localnet.ProbeResult) lifeprobe.Direction {
	return lifeprobe.Direction{Sent: r.Sent, Received: r.Received, Lost: r.Lost, LongestGap: r.LongestGap}
}
