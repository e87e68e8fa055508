package traffic

import (
	"encoding/binary"
	"fmt"
	"net"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"

	"github.com/nqos/nqos/flow"
)

// RawSpec describes raw frames to inject for a flow. Flow.SrcIP may be a
// spoofed address and SrcMAC another VM's MAC.
type RawSpec struct {
	Flow        flow.Spec
	SrcMAC      net.HardwareAddr
	DstMAC      net.HardwareAddr
	DSCP        int     // preset DSCP in the IP header
	Count       uint64  // frames to send; 0 = PPS * Flow.Duration
	PPS         float64 // frames per second; 0 = derived from Flow.Rate, else as fast as possible
	PayloadSize int     // L4 payload bytes, >= flow.PayloadMinSize; default 64
	Start       uint64  // first sequence number
}

// validate fills defaults and checks the spec; errors name the flow and field.
func (r *RawSpec) validate() error {
	if err := r.Flow.Validate(); err != nil {
		return err
	}
	bad := func(field, msg string) error { return fmt.Errorf("raw flow %q: field %s: %s", r.Flow.Name, field, msg) }
	if len(r.SrcMAC) != 6 || len(r.DstMAC) != 6 {
		return bad("SrcMAC/DstMAC", "both must be 6-byte MAC addresses")
	}
	if r.DSCP < 0 || r.DSCP > 63 {
		return bad("DSCP", fmt.Sprintf("%d out of range 0..63", r.DSCP))
	}
	if r.PayloadSize == 0 {
		r.PayloadSize = 64
	}
	if r.PayloadSize < flow.PayloadMinSize || r.PayloadSize > 9000 {
		return bad("PayloadSize", fmt.Sprintf("%d out of range %d..9000", r.PayloadSize, flow.PayloadMinSize))
	}
	if r.PPS == 0 && r.Flow.Rate > 0 {
		r.PPS = float64(r.Flow.Rate) / float64(8*r.frameLen())
	}
	if r.Count == 0 {
		if r.PPS <= 0 || r.Flow.Duration <= 0 {
			return bad("Count", "set Count, or a rate (PPS or Flow.Rate) and Flow.Duration")
		}
		r.Count = uint64(r.PPS * r.Flow.Duration.Seconds())
	}
	return nil
}

// frameLen is the Ethernet frame length (no FCS) of one injected frame.
func (r *RawSpec) frameLen() int {
	n := 14 + r.PayloadSize
	if r.Flow.VLAN != 0 {
		n += 4
	}
	if r.Flow.FamilyOf() == flow.IPv6 {
		n += 40
	} else {
		n += 20
	}
	switch r.Flow.Protocol {
	case flow.TCP:
		n += 20
	case flow.UDP, flow.ICMP:
		n += 8
	case flow.SCTP:
		n += 12 + (16+r.PayloadSize+3)&^3 - r.PayloadSize
	}
	return n
}

// FrameBuilder serializes the frames of one RawSpec, reusing its buffers.
type FrameBuilder struct {
	spec    RawSpec
	buf     gopacket.SerializeBuffer
	payload []byte
	opts    gopacket.SerializeOptions
}

// NewFrameBuilder validates the spec (filling defaults) and returns a
// builder for its frames.
func NewFrameBuilder(spec RawSpec) (*FrameBuilder, error) {
	if err := spec.validate(); err != nil {
		return nil, err
	}
	return &FrameBuilder{spec: spec, buf: gopacket.NewSerializeBuffer(), payload: make([]byte, spec.PayloadSize),
		opts: gopacket.SerializeOptions{FixLengths: true, ComputeChecksums: true}}, nil
}

// Build returns the frame carrying sequence number seq; the slice is valid
// until the next call.
func (b *FrameBuilder) Build(seq uint64) ([]byte, error) {
	s := &b.spec
	f := s.Flow
	flow.PutSeqPayload(b.payload, f.Tag(), seq)
	v6 := f.FamilyOf() == flow.IPv6
	eth := &layers.Ethernet{SrcMAC: s.SrcMAC, DstMAC: s.DstMAC, EthernetType: layers.EthernetTypeIPv4}
	if v6 {
		eth.EthernetType = layers.EthernetTypeIPv6
	}
	ls := []gopacket.SerializableLayer{eth}
	if f.VLAN != 0 {
		ls = append(ls, &layers.Dot1Q{VLANIdentifier: uint16(f.VLAN), Type: eth.EthernetType})
		eth.EthernetType = layers.EthernetTypeDot1Q
	}
	var net gopacket.NetworkLayer
	if v6 {
		ip := &layers.IPv6{Version: 6, TrafficClass: uint8(s.DSCP << 2), HopLimit: 64, NextHeader: ipProto(f, true),
			SrcIP: f.SrcIP.AsSlice(), DstIP: f.DstIP.AsSlice()}
		net, ls = ip, append(ls, ip)
	} else {
		ip := &layers.IPv4{Version: 4, IHL: 5, TOS: uint8(s.DSCP << 2), TTL: 64, Flags: layers.IPv4DontFragment,
			Id: uint16(seq), Protocol: ipProto(f, false), SrcIP: f.SrcIP.AsSlice(), DstIP: f.DstIP.AsSlice()}
		net, ls = ip, append(ls, ip)
	}
	l4, err := b.transport(net, seq, v6)
	if err != nil {
		return nil, fmt.Errorf("raw flow %q: frame %d: %w", f.Name, seq, err)
	}
	ls = append(ls, l4...)
	if err := gopacket.SerializeLayers(b.buf, b.opts, ls...); err != nil {
		return nil, fmt.Errorf("raw flow %q: serialize frame %d: %w", f.Name, seq, err)
	}
	return b.buf.Bytes(), nil
}

func ipProto(f flow.Spec, v6 bool) layers.IPProtocol {
	switch f.Protocol {
	case flow.TCP:
		return layers.IPProtocolTCP
	case flow.UDP:
		return layers.IPProtocolUDP
	case flow.SCTP:
		return layers.IPProtocolSCTP
	}
	if v6 {
		return layers.IPProtocolICMPv6
	}
	return layers.IPProtocolICMPv4
}

// transport returns the L4 layers (with payload) for one frame.
func (b *FrameBuilder) transport(net gopacket.NetworkLayer, seq uint64, v6 bool) ([]gopacket.SerializableLayer, error) {
	f := b.spec.Flow
	payload := gopacket.Payload(b.payload)
	switch f.Protocol {
	case flow.TCP:
		tcp := &layers.TCP{SrcPort: layers.TCPPort(f.SrcPort), DstPort: layers.TCPPort(f.DstPort),
			Seq: uint32(seq), ACK: true, PSH: true, Window: 65535}
		if err := tcp.SetNetworkLayerForChecksum(net); err != nil {
			return nil, err
		}
		return []gopacket.SerializableLayer{tcp, payload}, nil
	case flow.UDP:
		udp := &layers.UDP{SrcPort: layers.UDPPort(f.SrcPort), DstPort: layers.UDPPort(f.DstPort)}
		if err := udp.SetNetworkLayerForChecksum(net); err != nil {
			return nil, err
		}
		return []gopacket.SerializableLayer{udp, payload}, nil
	case flow.SCTP:
		sctp := &layers.SCTP{SrcPort: layers.SCTPPort(f.SrcPort), DstPort: layers.SCTPPort(f.DstPort), VerificationTag: 1}
		return []gopacket.SerializableLayer{sctp, gopacket.Payload(sctpData(b.payload, seq))}, nil
	}
	if v6 {
		icmp := &layers.ICMPv6{TypeCode: layers.CreateICMPv6TypeCode(layers.ICMPv6TypeEchoRequest, 0)}
		if err := icmp.SetNetworkLayerForChecksum(net); err != nil {
			return nil, err
		}
		echo := &layers.ICMPv6Echo{Identifier: uint16(f.Tag()), SeqNumber: uint16(seq)}
		return []gopacket.SerializableLayer{icmp, echo, payload}, nil
	}
	icmp := &layers.ICMPv4{TypeCode: layers.CreateICMPv4TypeCode(layers.ICMPv4TypeEchoRequest, 0),
		Id: uint16(f.Tag()), Seq: uint16(seq)}
	return []gopacket.SerializableLayer{icmp, payload}, nil
}

// sctpData wraps payload in an SCTP DATA chunk (payload length must keep
// the chunk 4-byte aligned for a clean frame; padding is added otherwise).
func sctpData(payload []byte, seq uint64) []byte {
	chunkLen := 16 + len(payload)
	padded := (chunkLen + 3) &^ 3
	c := make([]byte, padded)
	c[0] = 0    // DATA
	c[1] = 0x03 // B and E: unfragmented
	binary.BigEndian.PutUint16(c[2:4], uint16(chunkLen))
	binary.BigEndian.PutUint32(c[4:8], uint32(seq)) // TSN
	binary.BigEndian.PutUint16(c[8:10], 0)          // stream id
	binary.BigEndian.PutUint16(c[10:12], uint16(seq))
	copy(c[16:], payload)
	return c
}
