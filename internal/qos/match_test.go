package qos

import (
	"testing"

	"github.com/nqos/nqos/api/v1alpha1"
)

func ptr32(v int32) *int32 { return &v }

// ruleFor validates one rule through the real parser.
func ruleFor(t *testing.T, in v1alpha1.Rule) rule {
	t.Helper()
	nq := &v1alpha1.NetworkQoS{Spec: v1alpha1.Spec{Egress: []v1alpha1.Rule{in}}}
	nq.Namespace, nq.Name = "ns", "q"
	sp, err := parseSpec(nq)
	if err != nil {
		t.Fatal(err)
	}
	return sp.rules[0]
}

func TestBuildMatch(t *testing.T) {
	block := func(cidr string, except ...string) v1alpha1.Destination {
		return v1alpha1.Destination{IPBlock: &v1alpha1.IPBlock{CIDR: cidr, Except: except}}
	}
	sel := v1alpha1.Destination{PodSelector: nil, NamespaceSelector: nil}
	cases := []struct {
		name string
		cl   *v1alpha1.Classifier
		sets map[int]destSets
		want string
	}{
		{"no classifier", nil, nil, "inport == @pg && (ip4 || ip6)"},
		{"ports without to", &v1alpha1.Classifier{Ports: []*v1alpha1.Port{{Protocol: "TCP", Port: ptr32(80)}}}, nil,
			"inport == @pg && (ip4 || ip6) && tcp && tcp.dst == 80"},
		{"protocol only", &v1alpha1.Classifier{Ports: []*v1alpha1.Port{{Protocol: "UDP"}}}, nil, "inport == @pg && (ip4 || ip6) && udp"},
		{"port set sorted and deduped", &v1alpha1.Classifier{Ports: []*v1alpha1.Port{{Protocol: "TCP", Port: ptr32(8081)}, {Protocol: "TCP", Port: ptr32(8080)}, {Protocol: "TCP", Port: ptr32(8081)}}}, nil,
			"inport == @pg && (ip4 || ip6) && tcp && tcp.dst == {8080,8081}"},
		{"protocol-wide absorbs ports", &v1alpha1.Classifier{Ports: []*v1alpha1.Port{{Protocol: "TCP", Port: ptr32(80)}, {Protocol: "TCP"}}}, nil,
			"inport == @pg && (ip4 || ip6) && tcp"},
		{"several protocols", &v1alpha1.Classifier{Ports: []*v1alpha1.Port{{Protocol: "UDP", Port: ptr32(9090)}, {Protocol: "SCTP"}, {Protocol: "TCP", Port: ptr32(80)}}}, nil,
			"inport == @pg && (ip4 || ip6) && ((sctp) || (tcp && tcp.dst == 80) || (udp && udp.dst == 9090))"},
		{"v4 block", &v1alpha1.Classifier{To: []v1alpha1.Destination{block("10.20.0.0/16")}}, nil, "inport == @pg && ip4.dst == 10.20.0.0/16"},
		{"host bits masked", &v1alpha1.Classifier{To: []v1alpha1.Destination{block("10.20.1.7/16")}}, nil, "inport == @pg && ip4.dst == 10.20.0.0/16"},
		{"v6 block", &v1alpha1.Classifier{To: []v1alpha1.Destination{block("FD00:20::/64")}}, nil, "inport == @pg && ip6.dst == fd00:20::/64"},
		{"except", &v1alpha1.Classifier{To: []v1alpha1.Destination{block("128.115.0.0/17", "128.115.0.0/32", "128.115.1.0/24")}}, nil,
			"inport == @pg && ip4.dst == 128.115.0.0/17 && ip4.dst != {128.115.0.0,128.115.1.0/24}"},
		{"any destination", &v1alpha1.Classifier{To: []v1alpha1.Destination{sel}}, nil, "inport == @pg && (ip4.dst == 0.0.0.0/0 || ip6.dst == ::/0)"},
		{"two blocks and ports", &v1alpha1.Classifier{To: []v1alpha1.Destination{block("10.0.0.0/8", "10.1.0.0/16"), block("::/0")},
			Ports: []*v1alpha1.Port{{Protocol: "TCP", Port: ptr32(443)}}}, nil,
			"inport == @pg && ((ip4.dst == 10.0.0.0/8 && ip4.dst != {10.1.0.0/16}) || ip6.dst == ::/0) && tcp && tcp.dst == 443"},
		{"dual-stack set", &v1alpha1.Classifier{To: []v1alpha1.Destination{{PodSelector: labelSel("app", "db")}}},
			map[int]destSets{0: {"v4": "a1", "v6": "a2"}}, "inport == @pg && (ip4.dst == {$a1} || ip6.dst == {$a2})"},
		{"v4 set and block", &v1alpha1.Classifier{To: []v1alpha1.Destination{{PodSelector: labelSel("app", "db")}, block("10.0.0.0/8")}},
			map[int]destSets{0: {"v4": "a1"}}, "inport == @pg && (ip4.dst == {$a1} || ip4.dst == 10.0.0.0/8)"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := ruleFor(t, v1alpha1.Rule{DSCP: 1, Classifier: c.cl})
			if got := buildMatch(sourceMatch("pg"), r, c.sets); got != c.want {
				t.Errorf("match %q\nwant  %q", got, c.want)
			}
		})
	}
}

func TestRewriteLegacyMatch(t *testing.T) {
	cases := []struct {
		name, in, want string
		sets           []string
		ok             bool
	}{
		{"v4 only, no rest", "ip4.src == {$a1}", "inport == @pg && (ip4 || ip6)", []string{"a1"}, true},
		{"v6 with dest", "ip6.src == {$a2} && ip6.dst == fd00::/64", "inport == @pg && ip6.dst == fd00::/64", []string{"a2"}, true},
		{"dual with rest", "(ip4.src == {$a1} || ip6.src == {$a2}) && ip4.dst == 10.0.0.0/8 && tcp && tcp.dst == 80",
			"inport == @pg && ip4.dst == 10.0.0.0/8 && tcp && tcp.dst == 80", []string{"a1", "a2"}, true},
		{"upstream example", "ip4.src == {$S} && (ip4.dst == {$D} || (ip4.dst == 128.116.0.0/17 && ip4.dst != {128.116.0.0,128.116.0.255})) && tcp && tcp.dst == {8080,8081}",
			"inport == @pg && (ip4.dst == {$D} || (ip4.dst == 128.116.0.0/17 && ip4.dst != {128.116.0.0,128.116.0.255})) && tcp && tcp.dst == {8080,8081}", []string{"S"}, true},
		{"already migrated", "inport == @pg && (ip4 || ip6)", "", nil, false},
		{"dest-only set", "ip4.dst == {$a1}", "", nil, false},
		{"garbage after source", "ip4.src == {$a1}x", "", nil, false},
		{"bad set name", "ip4.src == {$a b}", "", nil, false},
		{"dual without close", "(ip4.src == {$a1} || ip6.src == {$a2}", "", nil, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, sets, ok := RewriteLegacyMatch(c.in, "pg")
			if got != c.want || ok != c.ok || fmtSlice(sets) != fmtSlice(c.sets) {
				t.Errorf("got (%q, %v, %v), want (%q, %v, %v)", got, sets, ok, c.want, c.sets, c.ok)
			}
			if ok {
				if again, _, ok2 := RewriteLegacyMatch(got, "pg"); ok2 {
					t.Errorf("not idempotent: %q -> %q", got, again)
				}
			}
		})
	}
	if _, _, ok := RewriteLegacyMatch("ip4.src == {$a1}", "bad pg"); ok {
		t.Error("invalid port-group name accepted")
	}
}
