package capture_test

import (
	"bufio"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
	"github.com/gopacket/gopacket/pcapgo"

	"github.com/nqos/nqos/flow"
	"github.com/nqos/nqos/harness/traffic"
)

var (
	macA = net.HardwareAddr{2, 0, 0, 0, 0, 0xa}
	macB = net.HardwareAddr{2, 0, 0, 0, 0, 0xb}
	macC = net.HardwareAddr{2, 0, 0, 0, 0, 0xc}
	t0   = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
)

// pcapFile writes a synthetic capture.
type pcapFile struct {
	t    testing.TB
	path string
	f    *os.File
	bw   *bufio.Writer
	w    *pcapgo.Writer
}

func newPcap(t testing.TB, name string) *pcapFile {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	p := &pcapFile{t: t, path: path, f: f, bw: bufio.NewWriterSize(f, 1<<20)}
	p.w = pcapgo.NewWriterNanos(p.bw)
	if err := p.w.WriteFileHeader(65535, layers.LinkTypeEthernet); err != nil {
		t.Fatal(err)
	}
	return p
}

func (p *pcapFile) add(ts time.Time, data []byte) {
	p.t.Helper()
	if err := p.w.WritePacket(gopacket.CaptureInfo{Timestamp: ts, CaptureLength: len(data), Length: len(data)}, data); err != nil {
		p.t.Fatal(err)
	}
}

func (p *pcapFile) close() string {
	p.t.Helper()
	if err := p.bw.Flush(); err != nil {
		p.t.Fatal(err)
	}
	if err := p.f.Close(); err != nil {
		p.t.Fatal(err)
	}
	return p.path
}

func (p *pcapFile) open() *os.File {
	p.t.Helper()
	f, err := os.Open(p.path)
	if err != nil {
		p.t.Fatal(err)
	}
	p.t.Cleanup(func() { f.Close() })
	return f
}

func builder(t testing.TB, spec flow.Spec, dscp, payload int, src net.HardwareAddr) *traffic.FrameBuilder {
	t.Helper()
	b, err := traffic.NewFrameBuilder(traffic.RawSpec{Flow: spec, SrcMAC: src, DstMAC: macB, DSCP: dscp, Count: 1, PayloadSize: payload})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func frame(t testing.TB, b *traffic.FrameBuilder, seq uint64) []byte {
	t.Helper()
	d, err := b.Build(seq)
	if err != nil {
		t.Fatal(err)
	}
	return append([]byte(nil), d...)
}

// serialize builds a frame from gopacket layers (for frames the injector
// does not make: ARP, ICMP errors, replies).
func serialize(t testing.TB, ls ...gopacket.SerializableLayer) []byte {
	t.Helper()
	buf := gopacket.NewSerializeBuffer()
	if err := gopacket.SerializeLayers(buf, gopacket.SerializeOptions{FixLengths: true, ComputeChecksums: true}, ls...); err != nil {
		t.Fatal(err)
	}
	return append([]byte(nil), buf.Bytes()...)
}

func arpFrame(t testing.TB) []byte {
	return serialize(t,
		&layers.Ethernet{SrcMAC: macA, DstMAC: layers.EthernetBroadcast, EthernetType: layers.EthernetTypeARP},
		&layers.ARP{AddrType: layers.LinkTypeEthernet, Protocol: layers.EthernetTypeIPv4, HwAddressSize: 6, ProtAddressSize: 4,
			Operation: layers.ARPRequest, SourceHwAddress: macA, SourceProtAddress: []byte{10, 0, 0, 1},
			DstHwAddress: make([]byte, 6), DstProtAddress: []byte{10, 0, 0, 2}})
}

// icmpUnreachable is a port-unreachable error from dst back to src quoting orig.
func icmpUnreachable(t testing.TB, src, dst netip.Addr, orig []byte) []byte {
	ip := &layers.IPv4{Version: 4, IHL: 5, TOS: 0xc0, TTL: 64, Protocol: layers.IPProtocolICMPv4, SrcIP: src.AsSlice(), DstIP: dst.AsSlice()}
	return serialize(t,
		&layers.Ethernet{SrcMAC: macB, DstMAC: macA, EthernetType: layers.EthernetTypeIPv4}, ip,
		&layers.ICMPv4{TypeCode: layers.CreateICMPv4TypeCode(layers.ICMPv4TypeDestinationUnreachable, layers.ICMPv4CodePort)},
		gopacket.Payload(orig[14:]))
}

// tcpReply is a bare ACK from the flow's destination back to its source.
func tcpReply(t testing.TB, s flow.Spec, sport uint16) []byte {
	ip := &layers.IPv6{Version: 6, HopLimit: 64, NextHeader: layers.IPProtocolTCP, SrcIP: s.DstIP.AsSlice(), DstIP: s.SrcIP.AsSlice()}
	tcp := &layers.TCP{SrcPort: layers.TCPPort(s.DstPort), DstPort: layers.TCPPort(sport), ACK: true, Window: 1000}
	if err := tcp.SetNetworkLayerForChecksum(ip); err != nil {
		t.Fatal(err)
	}
	return serialize(t, &layers.Ethernet{SrcMAC: macB, DstMAC: macA, EthernetType: layers.EthernetTypeIPv6}, ip, tcp)
}

// echoReply turns an IPv4 echo request frame into its reply.
func echoReply(t testing.TB, req []byte) []byte {
	t.Helper()
	p := gopacket.NewPacket(req, layers.LayerTypeEthernet, gopacket.Default)
	ip := p.Layer(layers.LayerTypeIPv4).(*layers.IPv4)
	icmp := p.Layer(layers.LayerTypeICMPv4).(*layers.ICMPv4)
	return serialize(t,
		&layers.Ethernet{SrcMAC: macB, DstMAC: macA, EthernetType: layers.EthernetTypeIPv4},
		&layers.IPv4{Version: 4, IHL: 5, TTL: 64, Protocol: layers.IPProtocolICMPv4, SrcIP: ip.DstIP, DstIP: ip.SrcIP},
		&layers.ICMPv4{TypeCode: layers.CreateICMPv4TypeCode(layers.ICMPv4TypeEchoReply, 0), Id: icmp.Id, Seq: icmp.Seq},
		gopacket.Payload(icmp.Payload))
}
