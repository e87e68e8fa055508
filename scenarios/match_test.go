package scenarios

import "testing"

func TestSameMatch(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		same bool
	}{
		{"ip4.dst == 192.168.50.102/32", "ip4.dst == 192.168.50.102", true},
		{"ip6.dst == fd00:10:0::5/128", "ip6.dst == fd00:10::5", true},
		{"ip4.dst == {10.0.0.2, 10.0.0.1/32}", "ip4.dst == {10.0.0.1, 10.0.0.2}", true},
		{"ip4.dst == {10.0.0.1 10.0.0.2}", "ip4.dst=={10.0.0.2,10.0.0.1}", true},
		{"inport == @$pg && (ip4 || ip6)", "inport == @$pg  &&  ( ip4 || ip6 )", true},
		{"tcp.dst == {2049, 111}", "tcp.dst == {111, 2049}", true},
		{"ip4.dst == 10.20.0.0/16", "ip4.dst == 10.20.0.0/16", true},
		{"ip4.dst == 10.20.0.0/16", "ip4.dst == 10.20.0.0/24", false},
		{"ip4.dst == 10.0.0.1/31", "ip4.dst == 10.0.0.1", false},
		{"ip4.dst == {10.0.0.1, 10.0.0.2}", "ip4.dst == {10.0.0.1}", false},
		{"ip4.dst != 10.0.0.1", "ip4.dst == 10.0.0.1", false},
		{"tcp && tcp.dst == 2049", "udp && udp.dst == 2049", false},
	} {
		if got := SameMatch(tc.a, tc.b); got != tc.same {
			t.Errorf("SameMatch(%q, %q) = %v, want %v (canonical %q vs %q)", tc.a, tc.b, got, tc.same, CanonicalMatch(tc.a), CanonicalMatch(tc.b))
		}
	}
}
