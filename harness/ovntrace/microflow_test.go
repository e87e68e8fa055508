package ovntrace

import (
	"net"
	"net/netip"
	"strings"
	"testing"
)

func TestMicroflowExpr(t *testing.T) {
	v4 := flow(swBlue, "vm-payments", gateway, "10.0.0.5", "10.20.0.7", ProtoTCP, 2049)
	v6icmp := flow(swBlue, "vm-payments", gateway, "fd00::5", "fd20::7", ProtoICMP, 0)
	v6icmp.TTL = 5
	udpSrc := flow(swBlue, "vm-prod", gateway, "10.0.0.6", "10.0.0.7", ProtoUDP, 53)
	udpSrc.SrcPort = 40000
	icmp4 := flow(swBlue, "vm-prod", gateway, "10.0.0.6", "10.0.0.7", ProtoICMP, 0)
	tests := []struct {
		name string
		mf   Microflow
		want string
	}{
		{"tcp v4", v4, `inport == "vm-payments" && eth.src == 0a:58:0a:00:00:05 && eth.dst == 02:00:00:00:00:fe && ip4.src == 10.0.0.5 && ip4.dst == 10.20.0.7 && ip.ttl == 64 && tcp && tcp.dst == 2049`},
		{"icmp v6 ttl", v6icmp, `inport == "vm-payments" && eth.src == 0a:58:0a:00:00:05 && eth.dst == 02:00:00:00:00:fe && ip6.src == fd00::5 && ip6.dst == fd20::7 && ip.ttl == 5 && icmp6 && icmp6.type == 128 && icmp6.code == 0`},
		{"udp src port", udpSrc, `inport == "vm-prod" && eth.src == 0a:58:0a:00:00:06 && eth.dst == 02:00:00:00:00:fe && ip4.src == 10.0.0.6 && ip4.dst == 10.0.0.7 && ip.ttl == 64 && udp && udp.src == 40000 && udp.dst == 53`},
		{"icmp v4", icmp4, `inport == "vm-prod" && eth.src == 0a:58:0a:00:00:06 && eth.dst == 02:00:00:00:00:fe && ip4.src == 10.0.0.6 && ip4.dst == 10.0.0.7 && ip.ttl == 64 && icmp4 && icmp4.type == 8 && icmp4.code == 0`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tt.mf.Expr()
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Errorf("Expr =\n%s\nwant\n%s", got, tt.want)
			}
		})
	}
}

func TestMicroflowInvalid(t *testing.T) {
	good := flow(swBlue, "vm-payments", gateway, "10.0.0.5", "10.20.0.7", ProtoTCP, 2049)
	tests := []struct {
		name    string
		mutate  func(m *Microflow)
		wantErr string
	}{
		{"quote in port", func(m *Microflow) { m.InPort = `vm" || 1 || "` }, "inport"},
		{"empty datapath", func(m *Microflow) { m.Datapath = "" }, "datapath"},
		{"space in datapath", func(m *Microflow) { m.Datapath = "ls 1" }, "datapath"},
		{"no eth.src", func(m *Microflow) { m.EthSrc = nil }, "eth.src"},
		{"64-bit eth.dst", func(m *Microflow) { m.EthDst = net.HardwareAddr{1, 2, 3, 4, 5, 6, 7, 8} }, "eth.dst"},
		{"zero src ip", func(m *Microflow) { m.Src = netip.Addr{} }, "ip src"},
		{"zoned dst", func(m *Microflow) { m.Src, m.Dst = netip.MustParseAddr("fe80::1"), netip.MustParseAddr("fe80::2%eth0") }, "ip dst"},
		{"mapped v4", func(m *Microflow) { m.Dst = netip.MustParseAddr("::ffff:10.0.0.1") }, "ip dst"},
		{"mixed families", func(m *Microflow) { m.Dst = netip.MustParseAddr("fd00::1") }, "different families"},
		{"tcp without port", func(m *Microflow) { m.DstPort = 0 }, "dst port missing"},
		{"icmp with port", func(m *Microflow) { m.Proto = ProtoICMP }, "icmp has none"},
		{"unknown proto", func(m *Microflow) { m.Proto = "gre" }, `protocol "gre"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := good
			tt.mutate(&m)
			if _, err := m.Expr(); err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("err = %v, want it to name %q", err, tt.wantErr)
			}
		})
	}
}

func TestParseProto(t *testing.T) {
	for in, want := range map[string]Proto{"TCP": ProtoTCP, "udp": ProtoUDP, " SCTP ": ProtoSCTP, "icmp": ProtoICMP} {
		if got, err := ParseProto(in); err != nil || got != want {
			t.Errorf("ParseProto(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, in := range []string{"", "icmp6", "tcp && 1"} {
		if _, err := ParseProto(in); err == nil {
			t.Errorf("ParseProto(%q) accepted", in)
		}
	}
}
