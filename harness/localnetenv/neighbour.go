package localnetenv

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"time"

	"github.com/nqos/nqos/internal/netns"
	"github.com/nqos/nqos/internal/poll"
)

// neighbourTimeout bounds how long a VM-to-VM flow waits for its sender to
// resolve the peer (ARP/ND retried every poll); a peer that never answers
// fails the flow before it starts.
const neighbourTimeout = 10 * time.Second

// unresolvedTimeout bounds the wait of a flow expected undelivered: the
// kernel gives up on a neighbour after three probes a second apart, so
// an entry without a MAC after 4 s of nudges is one that never resolves.
const unresolvedTimeout = 4 * time.Second

// awaitNeighbour resolves dst from the guest namespace ns before a flow
// starts: every poll it sends one datagram to dst's discard port, which
// makes the kernel resolve dst on dev, until the neighbour entry has a
// MAC. A VM-to-VM flow then measures marking, not the first ARP/ND
// exchange of a freshly booted fabric (whose first frames the userspace
// datapath may still drop). It runs before the captures start, so none of
// these datagrams is classified. It polls every every (a flow: 200 ms).
func awaitNeighbour(ctx context.Context, ns, dev string, src, dst netip.Addr, timeout, every time.Duration) error {
	h := netns.Named(ns)
	return poll.Until(ctx, timeout, every, fmt.Sprintf("%s: neighbour %s on %s", ns, dst, dev), func(context.Context) (bool, error) {
		var mac net.HardwareAddr
		err := h.WithConn(func(c *netns.Conn) error {
			var err error
			mac, err = c.Neigh(dev, dst)
			return err
		})
		if err != nil {
			return false, err
		}
		if len(mac) > 0 {
			return true, nil
		}
		if err := h.Do(func() error { return nudge(src, dst) }); err != nil {
			return false, err
		}
		return false, poll.Retry("no neighbour entry with a MAC yet")
	})
}

// refreshHost makes the guest namespace ns resolve the host dst on dev
// again when it has an entry for it with a MAC: it deletes that entry and
// resolves dst (awaitNeighbour, polled every 20 ms). The guest's
// solicitation carries its MAC, and the host's kernel, on receiving it,
// replaces whatever entry it holds for the guest's address. Without this a
// host whose entry for the guest has failed stays unable to answer: on
// OVN 23.03 the guest's neighbour advertisements are dropped (see the
// docs/quality.md's known problems), so the host's own solicitations go
// unanswered, while the guest, still holding a reachable entry for the
// host, sends none. A routed dst has no entry of its own and is left
// alone. It runs before the captures start.
func refreshHost(ctx context.Context, ns, dev string, src, dst netip.Addr) error {
	known := false
	err := netns.Named(ns).WithConn(func(c *netns.Conn) error {
		mac, err := c.Neigh(dev, dst)
		if err != nil || len(mac) == 0 {
			return err
		}
		known = true
		return c.DelNeigh(dev, dst)
	})
	if err != nil {
		return fmt.Errorf("%s: refresh neighbour %s on %s: %w", ns, dst, dev, err)
	}
	if !known {
		return nil
	}
	return awaitNeighbour(ctx, ns, dev, src, dst, neighbourTimeout, 20*time.Millisecond)
}

// nudge sends one UDP datagram from src to dst:9 (discard).
func nudge(src, dst netip.Addr) error {
	var laddr *net.UDPAddr
	if src.IsValid() {
		laddr = net.UDPAddrFromAddrPort(netip.AddrPortFrom(src, 0))
	}
	c, err := net.DialUDP("udp", laddr, net.UDPAddrFromAddrPort(netip.AddrPortFrom(dst, 9)))
	if err != nil {
		return fmt.Errorf("datagram %s -> %s: %w", src, dst, err)
	}
	defer c.Close()
	if _, err := c.Write([]byte("nqos neighbour")); err != nil {
		return fmt.Errorf("datagram %s -> %s: %w", src, dst, err)
	}
	return nil
}
