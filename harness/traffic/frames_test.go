package traffic

import (
	"net"
	"net/netip"
	"strings"
	"testing"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"

	"github.com/nqos/nqos/flow"
)

var (
	srcMAC = net.HardwareAddr{2, 0, 0, 0, 0, 1}
	dstMAC = net.HardwareAddr{2, 0, 0, 0, 0, 2}
)

func TestFrameBuilderLayers(t *testing.T) {
	v4a, v4b := netip.MustParseAddr("10.0.0.1"), netip.MustParseAddr("10.0.0.2")
	v6a, v6b := netip.MustParseAddr("fd00::1"), netip.MustParseAddr("fd00::2")
	cases := []struct {
		name string
		spec flow.Spec
		l4   gopacket.LayerType
	}{
		{"udp4", flow.Spec{Protocol: flow.UDP, SrcIP: v4a, DstIP: v4b, SrcPort: 1, DstPort: 2}, layers.LayerTypeUDP},
		{"tcp6", flow.Spec{Protocol: flow.TCP, SrcIP: v6a, DstIP: v6b, SrcPort: 3, DstPort: 4}, layers.LayerTypeTCP},
		{"sctp4-vlan", flow.Spec{Protocol: flow.SCTP, SrcIP: v4a, DstIP: v4b, SrcPort: 5, DstPort: 6, VLAN: 42}, layers.LayerTypeSCTP},
		{"icmp4", flow.Spec{Protocol: flow.ICMP, SrcIP: v4a, DstIP: v4b}, layers.LayerTypeICMPv4},
		{"icmp6-vlan", flow.Spec{Protocol: flow.ICMP, SrcIP: v6a, DstIP: v6b, VLAN: 7}, layers.LayerTypeICMPv6},
		{"udp6", flow.Spec{Protocol: flow.UDP, SrcIP: v6a, DstIP: v6b, SrcPort: 7, DstPort: 8}, layers.LayerTypeUDP},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			c.spec.Name = c.name
			b, err := NewFrameBuilder(RawSpec{Flow: c.spec, SrcMAC: srcMAC, DstMAC: dstMAC, DSCP: 34, Count: 1, PayloadSize: 101})
			if err != nil {
				t.Fatal(err)
			}
			data, err := b.Build(12345)
			if err != nil {
				t.Fatal(err)
			}
			if len(data) != b.spec.frameLen() {
				t.Errorf("frame length %d, frameLen() %d", len(data), b.spec.frameLen())
			}
			checkFrame(t, gopacket.NewPacket(data, layers.LayerTypeEthernet, gopacket.Default), c.spec, c.l4)
		})
	}
}

func checkFrame(t *testing.T, p gopacket.Packet, spec flow.Spec, l4 gopacket.LayerType) {
	t.Helper()
	if el := p.ErrorLayer(); el != nil {
		t.Fatalf("decode error: %v", el.Error())
	}
	if d, ok := p.Layer(layers.LayerTypeDot1Q).(*layers.Dot1Q); spec.VLAN != 0 && (!ok || int(d.VLANIdentifier) != spec.VLAN) {
		t.Errorf("VLAN tag missing or wrong: %+v", d)
	}
	var dscp uint8
	var src, dst net.IP
	if ip, ok := p.Layer(layers.LayerTypeIPv4).(*layers.IPv4); ok {
		dscp, src, dst = ip.TOS>>2, ip.SrcIP, ip.DstIP
	} else if ip, ok := p.Layer(layers.LayerTypeIPv6).(*layers.IPv6); ok {
		dscp, src, dst = ip.TrafficClass>>2, ip.SrcIP, ip.DstIP
	}
	if dscp != 34 || !src.Equal(spec.SrcIP.AsSlice()) || !dst.Equal(spec.DstIP.AsSlice()) {
		t.Errorf("ip header dscp %d %s -> %s", dscp, src, dst)
	}
	if p.Layer(l4) == nil {
		t.Fatalf("no %s layer in %s", l4, p)
	}
	payload := p.Layer(l4).LayerPayload()
	if spec.Protocol == flow.SCTP {
		payload = p.Layer(layers.LayerTypeSCTPData).(*layers.SCTPData).Payload
	}
	if spec.Protocol == flow.ICMP && spec.FamilyOf() == flow.IPv6 {
		payload = p.Layer(layers.LayerTypeICMPv6Echo).LayerPayload()
	}
	tag, seq, ok := flow.ParseSeqPayload(payload)
	if !ok || tag != spec.Tag() || seq != 12345 {
		t.Errorf("payload tag %x seq %d ok %v, want %x 12345", tag, seq, ok, spec.Tag())
	}
}

func TestRawSpecValidation(t *testing.T) {
	good := flow.Spec{Name: "f", Protocol: flow.UDP, SrcIP: netip.MustParseAddr("10.0.0.1"), DstIP: netip.MustParseAddr("10.0.0.2")}
	cases := []struct {
		name string
		raw  RawSpec
		want string
	}{
		{"no mac", RawSpec{Flow: good, Count: 1}, `raw flow "f": field SrcMAC/DstMAC`},
		{"dscp", RawSpec{Flow: good, SrcMAC: srcMAC, DstMAC: dstMAC, DSCP: 64, Count: 1}, "field DSCP"},
		{"payload", RawSpec{Flow: good, SrcMAC: srcMAC, DstMAC: dstMAC, PayloadSize: 8, Count: 1}, "field PayloadSize"},
		{"no count", RawSpec{Flow: good, SrcMAC: srcMAC, DstMAC: dstMAC}, "field Count"},
		{"bad flow", RawSpec{Flow: flow.Spec{Name: "g", Protocol: "x"}, SrcMAC: srcMAC, DstMAC: dstMAC, Count: 1}, `flow "g": field Protocol`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := c.raw.validate()
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error = %v, want %q", err, c.want)
			}
		})
	}
	r := RawSpec{Flow: good, SrcMAC: srcMAC, DstMAC: dstMAC, PayloadSize: 1000}
	r.Flow.Rate, r.Flow.Duration = 10_420_000, 2e9 // 10.42 Mbit/s of 1042-byte frames for 2 s
	if err := r.validate(); err != nil {
		t.Fatal(err)
	}
	if r.PPS != 1250 || r.Count != 2500 {
		t.Errorf("derived PPS %v Count %d, want 1250 and 2500", r.PPS, r.Count)
	}
}
