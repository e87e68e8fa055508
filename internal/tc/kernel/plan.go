package kernel

import (
	"encoding/binary"
	"net/netip"

	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netlink/nl"
	"golang.org/x/sys/unix"

	"github.com/nqos/nqos/internal/tc"
)

// quantum is every class's HTB quantum in bytes: about one MTU-sized
// frame, so classes of one priority level share spare bandwidth frame by
// frame (the default, rate/r2q, is far above the kernel's limit at tens
// of Mbit/s).
const quantum = 1514

// Field offsets and masks from the network header, as u32 matches them.
const (
	ipv4DstOff  = 16
	ipv6DstOff  = 24
	ipv4DSCP    = 0x00fc0000 // TOS byte's upper six bits in the first word
	ipv4DSCPSh  = 18
	ipv6DSCP    = 0x0fc00000 // traffic class's upper six bits
	ipv6DSCPSh  = 22
	rootQdiscID = 1
)

// plan is the netlink objects of a hierarchy on one link, in the order
// they are created.
type plan struct {
	qdisc   *netlink.Htb
	classes []*netlink.HtbClass // the root class first
	filters []*netlink.U32
}

func handle(minor uint16) uint32 { return netlink.MakeHandle(rootQdiscID, minor) }

// build turns a validated hierarchy into netlink objects for the link
// with index link.
func build(h tc.HTB, link int) plan {
	var p plan
	p.qdisc = netlink.NewHtb(netlink.QdiscAttrs{LinkIndex: link, Handle: handle(0), Parent: netlink.HANDLE_ROOT})
	root := netlink.ClassAttrs{LinkIndex: link, Parent: handle(0), Handle: handle(tc.RootMinor)}
	p.classes = append(p.classes, netlink.NewHtbClass(root, netlink.HtbClassAttrs{Rate: h.Ceil, Ceil: h.Ceil, Quantum: quantum}))
	for i, c := range h.Classes {
		minor := tc.LeafMinor(i)
		if c.Default {
			p.qdisc.Defcls = uint32(minor)
		}
		attrs := netlink.ClassAttrs{LinkIndex: link, Parent: handle(tc.RootMinor), Handle: handle(minor)}
		p.classes = append(p.classes, netlink.NewHtbClass(attrs, netlink.HtbClassAttrs{
			Rate: c.Rate, Ceil: h.CeilOf(c), Prio: c.Prio, Quantum: quantum}))
		add := func(proto uint16, keys []nl.TcU32Key) {
			p.filters = append(p.filters, u32(link, len(p.filters)+1, minor, proto, keys))
		}
		for _, pr := range c.Dst {
			proto := uint16(unix.ETH_P_IP)
			if pr.Addr().Is6() {
				proto = unix.ETH_P_IPV6
			}
			add(proto, dstKeys(pr))
		}
		for _, d := range c.DSCP {
			add(unix.ETH_P_IP, []nl.TcU32Key{{Mask: ipv4DSCP, Val: uint32(d) << ipv4DSCPSh}})
			add(unix.ETH_P_IPV6, []nl.TcU32Key{{Mask: ipv6DSCP, Val: uint32(d) << ipv6DSCPSh}})
		}
	}
	return p
}

// u32 is the filter of preference pref: a terminal u32 match of keys on
// packets of the ethertype proto into class minor.
func u32(link, pref int, minor uint16, proto uint16, keys []nl.TcU32Key) *netlink.U32 {
	return &netlink.U32{
		FilterAttrs: netlink.FilterAttrs{LinkIndex: link, Parent: handle(0), Priority: uint16(pref), Protocol: proto},
		ClassId:     handle(minor),
		Sel:         &nl.TcU32Sel{Flags: nl.TC_U32_TERMINAL, Keys: keys},
	}
}

// dstKeys are the u32 keys matching the destination prefix p: one key per
// 32-bit word of the address the prefix covers (at least one).
func dstKeys(p netip.Prefix) []nl.TcU32Key {
	p = p.Masked()
	addr := p.Addr().AsSlice()
	off := int32(ipv4DstOff)
	if p.Addr().Is6() {
		off = ipv6DstOff
	}
	var keys []nl.TcU32Key
	bits := p.Bits()
	for w := 0; w < len(addr)/4; w++ {
		n := min(max(bits-32*w, 0), 32)
		if n == 0 && len(keys) > 0 {
			break
		}
		mask := uint32(0)
		if n > 0 {
			mask = ^uint32(0) << (32 - n)
		}
		keys = append(keys, nl.TcU32Key{Off: off + int32(4*w), Mask: mask, Val: binary.BigEndian.Uint32(addr[4*w:]) & mask})
	}
	return keys
}
