// Package kernel installs a tc.HTB hierarchy on a link through rtnetlink
// inside a network namespace (the htb qdisc, its classes and u32
// filters), reads its class counters back and removes it. The kernel the
// testbed runs on has the htb, tbf and pfifo qdiscs and the u32
// classifier only (no flower, prio, netem), so this is everything it
// offers that classifies and shapes.
package kernel

import (
	"errors"
	"fmt"

	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"

	"github.com/nqos/nqos/internal/netns"
	"github.com/nqos/nqos/internal/tc"
)

// Shaper is an HTB hierarchy installed on one link; Close removes it.
type Shaper struct {
	ns   netns.NS
	dev  string
	htb  tc.HTB
	h    *netlink.Handle
	link netlink.Link
	// qlen is the link's txqueuelen before Install changed it (-1: unchanged).
	qlen int
}

// Install replaces the root qdisc of link dev in namespace ns with the
// hierarchy. On any error nothing of it is left on the link.
func Install(ns netns.NS, dev string, h tc.HTB) (*Shaper, error) {
	if err := h.Validate(); err != nil {
		return nil, fmt.Errorf("%s: link %s: %w", ns, dev, err)
	}
	s := &Shaper{ns: ns, dev: dev, htb: h, qlen: -1}
	err := ns.Do(func() error {
		var err error
		s.h, err = netlink.NewHandle(unix.NETLINK_ROUTE)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("%s: link %s: netlink: %w", ns, dev, err)
	}
	if s.link, err = s.h.LinkByName(dev); err != nil {
		s.h.Close()
		return nil, fmt.Errorf("%s: link %s: %w", ns, dev, err)
	}
	if h.QueueLen > 0 {
		orig := s.link.Attrs().TxQLen
		if err := s.h.LinkSetTxQLen(s.link, h.QueueLen); err != nil {
			s.h.Close()
			return nil, fmt.Errorf("%s: link %s: txqueuelen %d: %w", ns, dev, h.QueueLen, err)
		}
		s.qlen = orig
	}
	if err := s.apply(build(h, s.link.Attrs().Index)); err != nil {
		return nil, errors.Join(fmt.Errorf("%s: link %s: %w", ns, dev, err), s.Close())
	}
	return s, nil
}

func (s *Shaper) apply(p plan) error {
	if err := s.h.QdiscReplace(p.qdisc); err != nil {
		return fmt.Errorf("htb qdisc: %w", err)
	}
	for _, c := range p.classes {
		if err := s.h.ClassAdd(c); err != nil {
			return fmt.Errorf("htb class %s: %w", netlink.HandleStr(c.Handle), err)
		}
	}
	for _, f := range p.filters {
		if err := s.h.FilterAdd(f); err != nil {
			return fmt.Errorf("u32 filter %d into %s: %w", f.Priority, netlink.HandleStr(f.ClassId), err)
		}
	}
	return nil
}

// HTB is the hierarchy the shaper installed.
func (s *Shaper) HTB() tc.HTB { return s.htb }

// Stats reads every leaf class's counters, in the hierarchy's order; a
// class missing from the kernel's list is an error.
func (s *Shaper) Stats() ([]tc.ClassStats, error) {
	cs, err := s.h.ClassList(s.link, handle(0))
	if err != nil {
		return nil, fmt.Errorf("%s: link %s: list classes: %w", s.ns, s.dev, err)
	}
	byHandle := map[uint32]*netlink.HtbClass{}
	for _, c := range cs {
		if hc, ok := c.(*netlink.HtbClass); ok {
			byHandle[hc.Handle] = hc
		}
	}
	out := make([]tc.ClassStats, len(s.htb.Classes))
	for i, c := range s.htb.Classes {
		hc := byHandle[handle(tc.LeafMinor(i))]
		if hc == nil || hc.Statistics == nil || hc.Statistics.Basic == nil || hc.Statistics.Queue == nil {
			return nil, fmt.Errorf("%s: link %s: class %s (%s): no statistics", s.ns, s.dev, c.Name, netlink.HandleStr(handle(tc.LeafMinor(i))))
		}
		st := hc.Statistics
		out[i] = tc.ClassStats{Name: c.Name, Bytes: st.Basic.Bytes, Packets: uint64(st.Basic.Packets), Drops: uint64(st.Queue.Drops), Queued: uint64(st.Queue.Qlen)}
	}
	return out, nil
}

// Close removes the root qdisc (with its classes and filters) and
// releases the netlink socket; a link or qdisc already gone is not an
// error. It may be called more than once.
func (s *Shaper) Close() error {
	if s.h == nil {
		return nil
	}
	defer func() { s.h.Close(); s.h = nil }()
	if s.link == nil {
		return nil
	}
	var errs []error
	q := &netlink.Htb{QdiscAttrs: netlink.QdiscAttrs{LinkIndex: s.link.Attrs().Index, Handle: handle(0), Parent: netlink.HANDLE_ROOT}}
	if err := s.h.QdiscDel(q); err != nil && !gone(err) {
		errs = append(errs, fmt.Errorf("%s: link %s: remove htb qdisc: %w", s.ns, s.dev, err))
	}
	if s.qlen >= 0 {
		if err := s.h.LinkSetTxQLen(s.link, s.qlen); err != nil && !gone(err) {
			errs = append(errs, fmt.Errorf("%s: link %s: restore txqueuelen %d: %w", s.ns, s.dev, s.qlen, err))
		}
		s.qlen = -1
	}
	return errors.Join(errs...)
}

// gone reports whether err says the link or qdisc no longer exists.
func gone(err error) bool {
	return errors.Is(err, unix.ENOENT) || errors.Is(err, unix.ENODEV)
}
