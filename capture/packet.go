package capture

import (
	"net/netip"
	"time"
)

// Packet is one IP packet seen live (package capture/live's Watch): what
// the marked-packet counter (package harness/marks) counts.
type Packet struct {
	At       time.Time
	Src, Dst netip.Addr
	DSCP     int
	VLAN     int
}

// Decoder decodes received Ethernet frames into Packets with the same
// decoder as the pcap analysis, reusing its state between frames.
type Decoder struct{ f frame }

// Packet decodes one frame received at at; only IP packets (ICMP errors
// included) count.
func (d *Decoder) Packet(data []byte, at time.Time) (Packet, bool) {
	f := &d.f
	decodeFrame(data, len(data), f)
	if f.kind != kindIP && f.kind != kindICMPError {
		return Packet{}, false
	}
	return Packet{At: at, Src: f.src, Dst: f.dst, DSCP: int(f.dscp), VLAN: int(f.vlan)}, true
}
