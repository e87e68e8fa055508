package capture

import (
	"net/netip"

	"github.com/nqos/nqos/flow"
)

// flowKey is a 5-tuple plus VLAN; zero ports are wildcards in the index.
type flowKey struct {
	vlan     uint16
	proto    uint8
	src, dst netip.Addr
	sport    uint16
	dport    uint16
}

// classifier maps decoded frames to flow indexes.
type classifier struct {
	byKey map[flowKey]int
	byTag map[uint32]int
}

// match results
const (
	noFlow = -1
)

func protoNumber(s flow.Spec) uint8 {
	switch s.Protocol {
	case flow.TCP:
		return protoTCP
	case flow.UDP:
		return protoUDP
	case flow.SCTP:
		return protoSCTP
	default:
		if s.FamilyOf() == flow.IPv6 {
			return protoICMPv6
		}
		return protoICMP
	}
}

func newClassifier(specs []flow.Spec) *classifier {
	c := &classifier{byKey: map[flowKey]int{}, byTag: map[uint32]int{}}
	for i, s := range specs {
		k := flowKey{
			vlan: uint16(s.VLAN), proto: protoNumber(s),
			src: s.SrcIP.Unmap(), dst: s.DstIP.Unmap(),
			sport: s.SrcPort, dport: s.DstPort,
		}
		c.byKey[k] = i
		c.byTag[s.Tag()] = i
	}
	return c
}

// lookup returns the flow a frame belongs to, and whether it travels in the
// flow's reverse direction. Tagged raw payloads win over the 5-tuple so
// spoofed sources are still attributed to the flow that sent them.
func (c *classifier) lookup(f *frame) (idx int, reverse bool) {
	if tag, _, ok := flow.ParseSeqPayload(f.payload); ok && f.icmpEcho != 2 {
		if i, ok := c.byTag[tag]; ok {
			return i, false
		}
	}
	k := flowKey{vlan: f.vlan, proto: f.proto, src: f.src, dst: f.dst, sport: f.sport, dport: f.dport}
	if f.proto == protoICMP || f.proto == protoICMPv6 {
		if f.icmpEcho == 2 {
			k.src, k.dst = k.dst, k.src
			if i, ok := c.byKey[k]; ok {
				return i, true
			}
			return noFlow, false
		}
		k.sport, k.dport = 0, 0
	}
	if i, ok := c.find(k); ok {
		return i, false
	}
	k.src, k.dst, k.sport, k.dport = k.dst, k.src, k.dport, k.sport
	if i, ok := c.find(k); ok {
		return i, true
	}
	return noFlow, false
}

// find tries the exact key, then with the source port wildcarded, then
// the destination port, then both.
func (c *classifier) find(k flowKey) (int, bool) {
	if i, ok := c.byKey[k]; ok {
		return i, true
	}
	sport := k.sport
	k.sport = 0
	if i, ok := c.byKey[k]; ok {
		return i, true
	}
	k.sport = sport
	k.dport = 0
	if i, ok := c.byKey[k]; ok {
		return i, true
	}
	k.sport = 0
	i, ok := c.byKey[k]
	return i, ok
}
