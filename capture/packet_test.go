package capture

import (
	"net/netip"
	"testing"
	"time"
)

// ipv4Frame is an Ethernet frame (optionally 802.1Q-tagged) carrying an
// IPv4/UDP datagram with the given DSCP.
func ipv4Frame(vlan uint16, dscp uint8, src, dst netip.Addr) []byte {
	eth := []byte{2, 0, 0, 0, 0, 2, 2, 0, 0, 0, 0, 1}
	if vlan != 0 {
		eth = append(eth, 0x81, 0x00, byte(vlan>>8), byte(vlan))
	}
	eth = append(eth, 0x08, 0x00)
	ip := []byte{0x45, dscp << 2, 0, 28, 0, 0, 0, 0, 64, protoUDP, 0, 0}
	s, d := src.As4(), dst.As4()
	ip = append(append(ip, s[:]...), d[:]...)
	udp := []byte{0x1c, 0x84, 0x1c, 0x84, 0, 8, 0, 0}
	return append(append(eth, ip...), udp...)
}

func TestDecoderPacket(t *testing.T) {
	src, dst := netip.MustParseAddr("10.0.0.1"), netip.MustParseAddr("10.0.0.2")
	at := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	var d Decoder
	for _, tc := range []struct {
		name  string
		frame []byte
		want  Packet
		ok    bool
	}{
		{"untagged", ipv4Frame(0, 46, src, dst), Packet{At: at, Src: src, Dst: dst, DSCP: 46}, true},
		{"tagged", ipv4Frame(100, 10, src, dst), Packet{At: at, Src: src, Dst: dst, DSCP: 10, VLAN: 100}, true},
		{"ARP is no IP packet", append(make([]byte, 12), 0x08, 0x06, 0, 1), Packet{}, false},
		{"truncated", ipv4Frame(0, 46, src, dst)[:20], Packet{}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := d.Packet(tc.frame, at)
			if ok != tc.ok || got != tc.want {
				t.Errorf("Packet = %+v, %v; want %+v, %v", got, ok, tc.want, tc.ok)
			}
		})
	}
}
