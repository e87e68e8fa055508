package capture

import (
	"encoding/binary"
	"net/netip"
)

// IP protocol numbers used by the decoder.
const (
	protoICMP   = 1
	protoTCP    = 6
	protoUDP    = 17
	protoICMPv6 = 58
	protoSCTP   = 132
)

// frameKind is the decoder's verdict on one frame.
type frameKind uint8

const (
	kindNonIP     frameKind = iota // ARP, LLDP, probes, ...
	kindMalformed                  // truncated or inconsistent headers
	kindIP                         // an IP packet (L4 fields valid when hasL4)
	kindICMPError                  // an ICMP/ICMPv6 error message (never marked by OVN)
)

// frame holds the fields the analysis needs, decoded without allocation.
type frame struct {
	kind      frameKind
	vlan      uint16 // outermost 802.1Q/802.1ad VID, 0 = untagged
	tags      int    // number of VLAN tags
	v6        bool
	proto     uint8
	dscp      uint8
	src, dst  netip.Addr
	sport     uint16
	dport     uint16
	hasL4     bool
	icmpEcho  uint8 // 1 = echo request, 2 = echo reply, 0 = other
	payload   []byte
	untagLen  int // frame length without VLAN tags (what the meter counts)
	frameSize int
}

// decodeFrame decodes an Ethernet frame of original length wireLen.
func decodeFrame(data []byte, wireLen int, f *frame) {
	*f = frame{kind: kindMalformed, frameSize: wireLen}
	if len(data) < 14 {
		return
	}
	etype := binary.BigEndian.Uint16(data[12:14])
	off := 14
	for etype == 0x8100 || etype == 0x88a8 {
		if len(data) < off+4 {
			return
		}
		if f.tags == 0 {
			f.vlan = binary.BigEndian.Uint16(data[off:off+2]) & 0x0fff
		}
		f.tags++
		etype = binary.BigEndian.Uint16(data[off+2 : off+4])
		off += 4
	}
	f.untagLen = wireLen - 4*f.tags
	switch etype {
	case 0x0800:
		decodeIPv4(data[off:], f)
	case 0x86dd:
		decodeIPv6(data[off:], f)
	default:
		f.kind = kindNonIP
	}
}

func decodeIPv4(b []byte, f *frame) {
	if len(b) < 20 || b[0]>>4 != 4 {
		return
	}
	ihl := int(b[0]&0x0f) * 4
	total := int(binary.BigEndian.Uint16(b[2:4]))
	if ihl < 20 || len(b) < ihl {
		return
	}
	f.kind = kindIP
	f.dscp = b[1] >> 2
	f.proto = b[9]
	f.src = netip.AddrFrom4([4]byte(b[12:16]))
	f.dst = netip.AddrFrom4([4]byte(b[16:20]))
	if binary.BigEndian.Uint16(b[6:8])&0x1fff != 0 {
		return // non-first fragment: no L4 header
	}
	end := len(b)
	if total >= ihl && total < end {
		end = total // strip Ethernet padding
	}
	decodeL4(b[ihl:end], f, false)
}

func decodeIPv6(b []byte, f *frame) {
	if len(b) < 40 || b[0]>>4 != 6 {
		return
	}
	f.kind = kindIP
	f.v6 = true
	f.dscp = (b[0]&0x0f)<<2 | b[1]>>6
	f.src = netip.AddrFrom16([16]byte(b[8:24]))
	f.dst = netip.AddrFrom16([16]byte(b[24:40]))
	next := b[6]
	end := 40 + int(binary.BigEndian.Uint16(b[4:6]))
	if end > len(b) {
		end = len(b)
	}
	off := 40
	for {
		switch next {
		case 0, 43, 60: // hop-by-hop, routing, destination options
			if end < off+8 {
				f.proto = next
				return
			}
			next, off = b[off], off+8+int(b[off+1])*8
			continue
		case 44: // fragment
			if end < off+8 {
				f.proto = next
				return
			}
			fragOff := binary.BigEndian.Uint16(b[off+2:off+4]) >> 3
			next, off = b[off], off+8
			if fragOff != 0 {
				f.proto = next
				return
			}
			continue
		}
		break
	}
	f.proto = next
	if off > end {
		return
	}
	decodeL4(b[off:end], f, true)
}

func decodeL4(b []byte, f *frame, v6 bool) {
	switch f.proto {
	case protoTCP:
		if len(b) < 20 {
			return
		}
		doff := int(b[12]>>4) * 4
		if doff < 20 || len(b) < doff {
			return
		}
		setPorts(b, f, b[doff:])
	case protoUDP:
		if len(b) < 8 {
			return
		}
		setPorts(b, f, b[8:])
	case protoSCTP:
		if len(b) < 12 {
			return
		}
		var payload []byte
		if len(b) >= 28 && b[12] == 0 { // first chunk is DATA
			payload = b[28:]
		}
		setPorts(b, f, payload)
	case protoICMP, protoICMPv6:
		if (f.proto == protoICMPv6) != v6 || len(b) < 8 {
			return
		}
		f.hasL4 = true
		decodeICMP(b, f)
	}
}

func setPorts(b []byte, f *frame, payload []byte) {
	f.sport = binary.BigEndian.Uint16(b[0:2])
	f.dport = binary.BigEndian.Uint16(b[2:4])
	f.hasL4 = true
	f.payload = payload
}

func decodeICMP(b []byte, f *frame) {
	t := b[0]
	if f.v6 {
		switch {
		case t == 128:
			f.icmpEcho = 1
		case t == 129:
			f.icmpEcho = 2
		case t >= 1 && t <= 4:
			f.kind = kindICMPError
		}
	} else {
		switch t {
		case 8:
			f.icmpEcho = 1
		case 0:
			f.icmpEcho = 2
		case 3, 4, 5, 11, 12:
			f.kind = kindICMPError
		}
	}
	if f.icmpEcho != 0 {
		f.payload = b[8:]
	}
}
