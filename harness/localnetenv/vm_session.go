package localnetenv

import (
	"context"
	"fmt"
	"net/netip"
	"sync"
	"time"

	"github.com/nqos/nqos/harness/lifeprobe"
	"github.com/nqos/nqos/kubevirt"
	"github.com/nqos/nqos/topo/localnet"
)

// probeTraffic defaults: one datagram every 2 ms per direction (500/s).
const (
	defaultInterval = 2 * time.Millisecond
	defaultAfter    = 200
	defaultTimeout  = 20 * time.Second
	probePortOut    = 7201
	probePortIn     = 7202
)

// probeTraffic configures the constant-rate UDP probes of an operation.
type probeTraffic struct {
	// Peer is the external host the guest exchanges datagrams with.
	Peer string `json:"peer"`
	// Interval between datagrams per direction (default 2 ms).
	Interval time.Duration `json:"intervalNs"`
	// After is how many datagrams must arrive per direction after the
	// operation before the probes stop (default 200).
	After int `json:"after"`
	// Timeout bounds each wait of the operation (default 20 s).
	Timeout time.Duration `json:"timeoutNs"`
}

func (t probeTraffic) withDefaults() probeTraffic {
	if t.Interval <= 0 {
		t.Interval = defaultInterval
	}
	if t.After <= 0 {
		t.After = defaultAfter
	}
	if t.Timeout <= 0 {
		t.Timeout = defaultTimeout
	}
	return t
}

// session is a probe stream from a guest to a peer host and, optionally,
// back.
type session struct {
	tr      probeTraffic
	vmIP    netip.Addr
	peerIP  netip.Addr
	out, in *localnet.Probe
}

// pinNeighbour installs a permanent neighbour entry for the peer in the
// guest, so the first datagrams after a (re)plug do not wait for an ARP
// retry (1 s) that has nothing to do with QoS.
func (o *vmOps) pinNeighbour(ctx context.Context, netns, nic string, peer localnet.Host, peerIP netip.Addr) error {
	mac, err := o.mac(ctx, peer.Netns, peer.Ifname)
	if err != nil {
		return err
	}
	_, err = o.tb.Exec(ctx, netns, "ip", "neigh", "replace", peerIP.String(), "lladdr", mac.String(), "dev", nic, "nud", "permanent")
	if err != nil {
		return fmt.Errorf("neighbour %s in %s: %w", peerIP, netns, err)
	}
	return nil
}

// startSession starts the guest -> peer probe and, with both, the
// peer -> guest probe.
func (o *vmOps) startSession(ctx context.Context, netns, nic string, vmIP netip.Addr, tr probeTraffic, both bool) (*session, error) {
	tr = tr.withDefaults()
	peer, peerIP, err := o.host(tr.Peer)
	if err != nil {
		return nil, err
	}
	if err := o.pinNeighbour(ctx, netns, nic, peer, peerIP); err != nil {
		return nil, err
	}
	s := &session{tr: tr, vmIP: vmIP, peerIP: peerIP}
	s.out, err = localnet.StartProbe(ctx, netns, netip.AddrPortFrom(vmIP, probePortOut), peer.Netns, netip.AddrPortFrom(peerIP, probePortOut), tr.Interval)
	if err != nil {
		return nil, fmt.Errorf("probe %s -> %s: %w", vmIP, peerIP, err)
	}
	if both {
		s.in, err = localnet.StartProbe(ctx, peer.Netns, netip.AddrPortFrom(peerIP, probePortIn), netns, netip.AddrPortFrom(vmIP, probePortIn), tr.Interval)
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

// watchedSession watches the uplinks of nodes (default: the VM's node)
// and starts the VM's probe session.
func (o *vmOps) watchedSession(ctx context.Context, in kubevirt.Instance, vmIP netip.Addr, tr probeTraffic, both bool, nodes ...string) (*watched, error) {
	if len(nodes) == 0 {
		nodes = []string{in.Node}
	}
	ups, err := o.watchUplinks(nodes...)
	if err != nil {
		return nil, err
	}
	s, err := o.startSession(ctx, in.Netns, in.NICs[0], vmIP, tr, both)
	if err != nil {
		ups.Close()
		return nil, err
	}
	return &watched{session: s, ups: ups}, nil
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

// end lets the probes deliver the traffic's After more datagrams, stops
// them and then the membership recorder; out is guest -> peer.
func (w *watched) end(ctx context.Context, rec *memberRecorder) (out, in lifeprobe.Direction, err error) {
	if err := w.waitMore(ctx, w.tr.After); err != nil {
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
		err := localnet.Poll(ctx, s.tr.Timeout, fmt.Sprintf("%d more probe datagrams (%s <-> %s)", n, s.vmIP, s.peerIP),
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

func (o *vmOps) recordMembers(ctx context.Context, obj objectRef) *memberRecorder {
	ctx, cancel := context.WithCancel(ctx)
	r := &memberRecorder{Membership: lifeprobe.NewMembership(), cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(r.done)
		t := time.NewTicker(memberSample)
		defer t.Stop()
		for {
			members, err := o.Members(ctx, obj)
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
