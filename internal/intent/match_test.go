package intent

import (
	"net/netip"
	"strings"
	"testing"
)

func TestEvalMatch(t *testing.T) {
	env := matchEnv{
		portGroups: map[string][]string{"a1": {"lsp-pay", "lsp-app"}, "empty": nil},
		addrSets:   map[string][]string{"s4": {"10.20.0.5", "10.30.0.0/24"}, "none": nil},
	}
	tcp4 := Packet{InPort: "lsp-pay", Src: netip.MustParseAddr("10.20.0.5"), Dst: netip.MustParseAddr("10.20.0.100"), Protocol: "tcp", DstPort: 2049}
	udp6 := Packet{InPort: "lsp-app", Src: netip.MustParseAddr("fd00::5"), Dst: netip.MustParseAddr("fd00::100"), Protocol: "udp", DstPort: 5201}
	for _, tc := range []struct {
		match string
		p     Packet
		want  bool
	}{
		{"inport == @a1 && (ip4 || ip6)", tcp4, true},
		{"inport == @a1 && (ip4 || ip6)", udp6, true},
		{"inport == @empty && (ip4 || ip6)", tcp4, false},
		{"inport == @a1 && ip4.dst == 10.20.0.0/16 && tcp && tcp.dst == 2049", tcp4, true},
		{"inport == @a1 && ip4.dst == 10.20.0.0/16 && tcp && tcp.dst == 2049", udp6, false},
		{"inport == @a1 && ip4.dst == 10.20.0.0/16 && tcp && tcp.dst == 5201", tcp4, false},
		{"inport == @a1 && ip4.dst == 10.20.0.0/16 && ip4.dst != {10.20.0.100,10.20.0.7}", tcp4, false},
		{"inport == @a1 && ip4.dst == 10.20.0.0/16 && ip4.dst != {10.20.0.7}", tcp4, true},
		{"inport == @a1 && (ip4.dst == 0.0.0.0/0 || ip6.dst == ::/0)", udp6, true},
		{"inport == @a1 && ip6.dst == fd00::/64 && ((tcp && tcp.dst == {80,443}) || (udp && udp.dst == {5201}))", udp6, true},
		{"inport == @a1 && ip6.dst == fd00::/64 && ((tcp && tcp.dst == {80,443}) || (udp))", tcp4, false},
		{"ip4.src == {$s4} && (ip4 || ip6)", tcp4, true},
		{"ip4.src == {$none} && (ip4 || ip6)", tcp4, false},
		{"(ip4.src == {$s4} || ip6.src == {$none}) && ip4.dst == {$s4}", tcp4, false},
		{`inport == "lsp-pay" && !udp`, tcp4, true},
		{"tcp.dst >= 2000 && tcp.dst <= 2100", tcp4, true},
	} {
		got, err := evalMatch(tc.match, tc.p, env)
		if err != nil || got != tc.want {
			t.Errorf("%q on %+v: %v, %v; want %v", tc.match, tc.p, got, err, tc.want)
		}
	}
}

func TestEvalMatchRejectsWhatItCannotJudge(t *testing.T) {
	p := Packet{InPort: "x", Src: netip.MustParseAddr("10.0.0.1"), Dst: netip.MustParseAddr("10.0.0.2"), Protocol: "udp", DstPort: 1}
	env := matchEnv{portGroups: map[string][]string{}, addrSets: map[string][]string{}}
	for _, tc := range []struct{ match, err string }{
		{"inport == @missing", "port group @missing does not exist"},
		{"ip4.dst == {$missing}", "address set $missing does not exist"},
		{"eth.src == 00:00:00:00:00:01", `unsupported field "eth.src"`},
		{"ct.new", `unsupported predicate "ct.new"`},
		{"(ip4 && udp", "missing )"},
		{"ip4 udp", `unexpected "udp"`},
		{"ip4.dst == {10.0.0.2", "missing }"},
		{"ip4.dst == banana", `address "banana"`},
	} {
		_, err := evalMatch(tc.match, p, env)
		if err == nil || !strings.Contains(err.Error(), tc.err) || !strings.Contains(err.Error(), tc.match) {
			t.Errorf("%q: error %v, want one naming the match and %q", tc.match, err, tc.err)
		}
	}
}
