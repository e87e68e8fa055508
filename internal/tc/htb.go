// Package tc owns the specification of Linux traffic control on the
// testbed's links: an HTB hierarchy (one root class holding the link's
// ceiling, leaf classes with a guaranteed rate, a ceiling and a
// strict-priority level) whose leaves are selected on the destination
// address or the DSCP field, its validation, its class handles and the
// per-class counters read back. It is pure data: package tc/kernel
// installs a hierarchy through rtnetlink inside a network namespace.
package tc

import (
	"fmt"
	"net/netip"
	"slices"
)

// HTB is an HTB hierarchy on one link's egress.
type HTB struct {
	// Ceil is the root class's rate and ceiling in bit/s: the capacity
	// of the link as the hierarchy emulates it.
	Ceil uint64
	// Classes are the leaf classes; exactly one is the default.
	Classes []Class
	// QueueLen, if set, is every leaf queue's length in packets: the
	// link's txqueuelen while the hierarchy is installed (a leaf's pfifo
	// takes its length from it). Short queues make the leaves, not the
	// sender's socket buffer, the place where an overloaded class drops:
	// a userspace datapath sending through an AF_PACKET socket otherwise
	// loses packets at its socket before any class is full.
	QueueLen int
}

// Class is one leaf class under the root.
type Class struct {
	Name string
	// Rate is the guaranteed rate in bit/s.
	Rate uint64
	// Ceil is how far the class may borrow, in bit/s (0: the root's Ceil).
	Ceil uint64
	// Prio is HTB's priority level: a lower level gets spare bandwidth
	// first (0 is the highest).
	Prio uint32
	// Default makes the class take every packet no filter selects.
	Default bool
	// Dst selects packets to any of these prefixes.
	Dst []netip.Prefix
	// DSCP selects IPv4 and IPv6 packets with any of these DSCP values.
	DSCP []int
}

// maxPrio is HTB's lowest priority level (TC_HTB_NUMPRIO - 1).
const maxPrio = 7

// RootMinor is the root class's minor number (handle 1:RootMinor); leaf
// i has LeafMinor(i).
const (
	RootMinor = 1
	firstLeaf = 0x10
)

// LeafMinor is the minor number of the i-th leaf class (handle 1:minor).
func LeafMinor(i int) uint16 { return uint16(firstLeaf + i) }

// Validate checks the hierarchy: a ceiling, named classes with a rate
// within it, exactly one default, valid selectors, guarantees that do not
// exceed the ceiling together.
func (h HTB) Validate() error {
	if h.Ceil == 0 {
		return fmt.Errorf("htb: ceil: must be above 0")
	}
	if h.QueueLen < 0 || h.QueueLen > 100000 {
		return fmt.Errorf("htb: queueLen %d: must be 0-100000", h.QueueLen)
	}
	if len(h.Classes) == 0 || len(h.Classes) > 0xff-firstLeaf {
		return fmt.Errorf("htb: classes: %d, must be 1-%d", len(h.Classes), 0xff-firstLeaf)
	}
	var defaults int
	var sum uint64
	seen := map[string]bool{}
	for i, c := range h.Classes {
		if err := h.validateClass(c); err != nil {
			return fmt.Errorf("htb: classes[%d] (%s): %w", i, c.Name, err)
		}
		if seen[c.Name] {
			return fmt.Errorf("htb: classes[%d]: duplicate name %q", i, c.Name)
		}
		seen[c.Name] = true
		if c.Default {
			defaults++
		}
		sum += c.Rate
	}
	if defaults != 1 {
		return fmt.Errorf("htb: %d default classes, need exactly 1 (unclassified packets would leave unshaped)", defaults)
	}
	if sum > h.Ceil {
		return fmt.Errorf("htb: the classes' rates add up to %d bit/s, above the ceiling %d", sum, h.Ceil)
	}
	return nil
}

func (h HTB) validateClass(c Class) error {
	switch {
	case c.Name == "":
		return fmt.Errorf("name: empty")
	case c.Rate == 0:
		return fmt.Errorf("rate: must be above 0")
	case c.Ceil > h.Ceil:
		return fmt.Errorf("ceil %d: above the root ceiling %d", c.Ceil, h.Ceil)
	case c.Rate > h.CeilOf(c):
		return fmt.Errorf("rate %d: above the class ceiling %d", c.Rate, h.CeilOf(c))
	case c.Prio > maxPrio:
		return fmt.Errorf("prio %d: must be 0-%d", c.Prio, maxPrio)
	case !c.Default && len(c.Dst) == 0 && len(c.DSCP) == 0:
		return fmt.Errorf("selects nothing: give dst, dscp or default")
	}
	for _, p := range c.Dst {
		if !p.IsValid() {
			return fmt.Errorf("dst: invalid prefix")
		}
	}
	for _, d := range c.DSCP {
		if d < 0 || d > 63 {
			return fmt.Errorf("dscp %d: must be 0-63", d)
		}
	}
	return nil
}

// CeilOf is how far class c may borrow in bit/s: its own ceiling, or the
// root's when it sets none.
func (h HTB) CeilOf(c Class) uint64 {
	if c.Ceil == 0 {
		return h.Ceil
	}
	return c.Ceil
}

// ClassID is the minor handle of the named leaf (1:<minor>), 0 if none.
func (h HTB) ClassID(name string) uint16 {
	i := slices.IndexFunc(h.Classes, func(c Class) bool { return c.Name == name })
	if i < 0 {
		return 0
	}
	return LeafMinor(i)
}

// ClassStats are one leaf class's counters.
type ClassStats struct {
	Name    string `json:"name"`
	Bytes   uint64 `json:"bytes"`
	Packets uint64 `json:"packets"`
	Drops   uint64 `json:"drops"`
	Queued  uint64 `json:"queued"` // packets waiting in the class's queue
}
