package intent

import (
	"fmt"
	"net/netip"
	"slices"
	"testing"
)

func pfx(s string) netip.Prefix { return netip.MustParsePrefix(s) }
func addr(s string) netip.Addr  { return netip.MustParseAddr(s) }

func block(cidr string, except ...string) Block {
	b := Block{CIDR: pfx(cidr)}
	for _, e := range except {
		b.Except = append(b.Except, pfx(e))
	}
	return b
}

// classKeys renders classes as "family dst proto/port".
func classKeys(cs []Class) []string {
	var out []string
	for _, c := range cs {
		out = append(out, fmt.Sprintf("%s %s %s/%d", c.Family, c.Dst, c.Protocol, c.Port))
	}
	return out
}

func TestClasses(t *testing.T) {
	dual := VM{Ref: "vms/a", Addrs: []netip.Prefix{pfx("10.10.0.11/8"), pfx("fd00:10::11/64")}}
	v4only := VM{Ref: "vms/b", Addrs: []netip.Prefix{pfx("10.10.0.12/16")}}
	both := []Family{V4, V6}
	cases := []struct {
		name  string
		vm    VM
		rules []Rule
		fams  []Family
		taken []netip.Addr
		want  []string
	}{
		{name: "no rule: one class per family, outside everything", vm: dual, fams: both,
			want: []string{"v4 10.0.0.1 udp/5201", "v6 fd00:10::1 udp/5201"}},
		{name: "catch-all rule, v4 only asked", vm: dual, fams: []Family{V4}, rules: []Rule{{Ref: "ns/o#0"}},
			want: []string{"v4 10.0.0.1 udp/5201"}},
		{name: "a VM's own and other VMs' addresses are never destinations", vm: v4only, fams: both,
			taken: []netip.Addr{addr("10.10.0.1"), addr("10.10.0.2")},
			want:  []string{"v4 10.10.0.3 udp/5201"}},
		{name: "ipBlock: inside and outside", vm: v4only, fams: both,
			rules: []Rule{{Ref: "ns/o#0", Blocks: []Block{block("10.10.128.0/17")}}},
			want:  []string{"v4 10.10.0.1 udp/5201", "v4 10.10.128.1 udp/5201"}},
		{name: "except hole: inside the block outside the hole, inside the hole", vm: v4only, fams: both,
			rules: []Rule{{Ref: "ns/o#0", Blocks: []Block{block("10.10.128.0/17", "10.10.128.0/24")}}},
			want:  []string{"v4 10.10.0.1 udp/5201", "v4 10.10.128.1 udp/5201", "v4 10.10.129.0 udp/5201"}},
		{name: "a single-address except", vm: v4only, fams: both,
			rules: []Rule{{Ref: "ns/o#0", Blocks: []Block{block("10.10.200.0/24", "10.10.200.1/32")}}},
			want:  []string{"v4 10.10.0.1 udp/5201", "v4 10.10.200.1 udp/5201", "v4 10.10.200.2 udp/5201"}},
		{name: "listed TCP port: the port, another TCP port, UDP", vm: v4only, fams: both,
			rules: []Rule{{Ref: "ns/o#1", Ports: []Port{{"tcp", 2049}}}},
			want:  []string{"v4 10.10.0.1 tcp/2049", "v4 10.10.0.1 tcp/5201", "v4 10.10.0.1 udp/5201"}},
		{name: "listed port 5201 pushes the unlisted port to 5202", vm: v4only, fams: both,
			rules: []Rule{{Ref: "ns/o#0", Ports: []Port{{"udp", 5201}}}},
			want:  []string{"v4 10.10.0.1 tcp/5201", "v4 10.10.0.1 udp/5201", "v4 10.10.0.1 udp/5202"}},
		{name: "protocol without port, both protocols listed", vm: v4only, fams: both,
			rules: []Rule{{Ref: "ns/o#0", Ports: []Port{{"tcp", 0}, {"udp", 53}}}},
			want:  []string{"v4 10.10.0.1 tcp/5201", "v4 10.10.0.1 udp/53", "v4 10.10.0.1 udp/5201"}},
		{name: "v6 block: v4 gets only the outside class", vm: dual, fams: both,
			rules: []Rule{{Ref: "ns/o#0", Blocks: []Block{block("fd00:10::100/120")}}},
			want:  []string{"v4 10.0.0.1 udp/5201", "v6 fd00:10::1 udp/5201", "v6 fd00:10::101 udp/5201"}},
		{name: "blocks and ports cross: every destination with every port class", vm: dual, fams: []Family{V4},
			rules: []Rule{{Ref: "ns/b#1", Blocks: []Block{block("10.20.0.0/16")}, Ports: []Port{{"tcp", 2049}}}, {Ref: "ns/b#0"}},
			want: []string{"v4 10.0.0.1 tcp/2049", "v4 10.0.0.1 tcp/5201", "v4 10.0.0.1 udp/5201",
				"v4 10.20.0.1 tcp/2049", "v4 10.20.0.1 tcp/5201", "v4 10.20.0.1 udp/5201"}},
		{name: "a block covering the VM's subnet: outside goes to the documentation range", vm: v4only, fams: both,
			rules: []Rule{{Ref: "ns/o#0", Blocks: []Block{block("10.0.0.0/8")}}},
			want:  []string{"v4 10.0.0.1 udp/5201", "v4 192.0.2.1 udp/5201"}},
		{name: "0.0.0.0/0 with an except: inside the block, inside the hole, no outside", vm: v4only, fams: both,
			rules: []Rule{{Ref: "ns/o#0", Blocks: []Block{block("0.0.0.0/0", "10.0.0.0/8")}}},
			want:  []string{"v4 10.0.0.1 udp/5201", "v4 192.0.2.1 udp/5201"}},
		{name: "::/0 and 0.0.0.0/0 with excepts, dual-stack", vm: dual, fams: both,
			rules: []Rule{{Ref: "ns/o#0", Blocks: []Block{block("0.0.0.0/0", "10.0.0.0/8", "192.0.2.0/24"), block("::/0", "fd00::/8")}}},
			want: []string{"v4 10.0.0.1 udp/5201", "v4 192.0.2.1 udp/5201", "v4 198.51.100.1 udp/5201",
				"v6 2001:db8::1 udp/5201", "v6 fd00::1 udp/5201"}},
		{name: "a v4 block of everything leaves the v6 outside class", vm: dual, fams: both,
			rules: []Rule{{Ref: "ns/o#0", Blocks: []Block{block("0.0.0.0/0")}}},
			want:  []string{"v4 192.0.2.1 udp/5201", "v6 fd00:10::1 udp/5201"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			taken := append(slices.Clone(tc.taken), tc.vm.Addrs[0].Addr())
			got, err := NewDeriver(taken).Classes(tc.vm, tc.rules, tc.fams)
			if err != nil {
				t.Fatal(err)
			}
			if keys := classKeys(got); !slices.Equal(keys, tc.want) {
				t.Errorf("classes:\n got  %q\n want %q", keys, tc.want)
			}
			for _, c := range got {
				if c.VM != tc.vm.Ref || !c.Src.IsValid() || c.Why == "" {
					t.Errorf("class %+v: missing VM, source or reason", c)
				}
			}
		})
	}
}

func TestClassesErrors(t *testing.T) {
	vm := VM{Ref: "vms/a", Addrs: []netip.Prefix{pfx("10.10.0.11/8")}}
	_, err := NewDeriver(nil).Classes(vm, []Rule{{Ref: "ns/o#2", Blocks: []Block{block("10.20.0.0/30", "10.20.0.0/30")}}}, []Family{V4})
	if err == nil || err.Error() != "VM vms/a: rule ns/o#2: ipBlock 10.20.0.0/30 has no address outside its excepts" {
		t.Fatalf("err = %v", err)
	}
}

func TestShadows(t *testing.T) {
	catchAll := func(ref string, prio int) Rule { return Rule{Ref: ref, Priority: prio, DSCP: 46} }
	backup := func(ref string, prio int) Rule {
		return Rule{Ref: ref, Priority: prio, DSCP: 8, RateKbps: 100000, Blocks: []Block{block("10.20.0.0/16")}, Ports: []Port{{"tcp", 2049}}}
	}
	cases := []struct {
		name  string
		rules []Rule
		split bool
		want  []string // "rule by: consequence"
	}{
		{name: "backup above the catch-all: nothing shadowed", rules: []Rule{catchAll("p#0", 10600), backup("b#1", 10701)}},
		{name: "backup below the catch-all, two stages: mark lost, cap kept", split: true,
			rules: []Rule{catchAll("p#0", 10600), backup("b#1", 10501)},
			want:  []string{"b#1 p#0: mark (DSCP 8) lost, cap (100000 kbps) kept: the meter is a stage of its own"}},
		{name: "backup below the catch-all, one stage: mark and cap lost",
			rules: []Rule{catchAll("p#0", 10600), backup("b#1", 10501)},
			want:  []string{"b#1 p#0: mark (DSCP 8) lost, cap (100000 kbps) lost: one QoS stage, the winning row marks and meters"}},
		{name: "a metered catch-all above takes the cap on two stages too", split: true,
			rules: []Rule{{Ref: "c#0", Priority: 10600, DSCP: 46, RateKbps: 500000}, backup("b#1", 10501)},
			want:  []string{"b#1 c#0: mark (DSCP 8) lost, cap (100000 kbps) lost to c#0's meter"}},
		{name: "equal priority shadows nothing", rules: []Rule{catchAll("p#0", 10600), catchAll("q#0", 10600)}},
		{name: "a wider block and any port cover", rules: []Rule{{Ref: "w#0", Priority: 10700, Blocks: []Block{block("10.0.0.0/8")}}, backup("b#1", 10501)},
			want: []string{"b#1 w#0: mark (DSCP 8) lost, cap (100000 kbps) lost: one QoS stage, the winning row marks and meters"}},
		{name: "an except hole in the upper block lets the lower rule win there",
			rules: []Rule{{Ref: "w#0", Priority: 10700, Blocks: []Block{block("10.0.0.0/8", "10.20.5.0/24")}}, backup("b#1", 10501)}},
		{name: "the lower rule's own except matches the hole",
			rules: []Rule{{Ref: "w#0", Priority: 10700, Blocks: []Block{block("10.0.0.0/8", "10.20.5.0/24")}},
				{Ref: "l#0", Priority: 10500, DSCP: 1, Blocks: []Block{block("10.20.0.0/16", "10.20.0.0/20")}}},
			want: []string{"l#0 w#0: mark (DSCP 1) lost"}},
		{name: "a narrower block does not cover a catch-all", rules: []Rule{{Ref: "n#0", Priority: 10700, Blocks: []Block{block("10.20.0.0/16")}}, catchAll("p#0", 10600)}},
		{name: "ports: the upper rule's port list must hold every lower port",
			rules: []Rule{{Ref: "u#0", Priority: 10700, Ports: []Port{{"tcp", 0}}}, {Ref: "l#0", Priority: 10500, Ports: []Port{{"tcp", 2049}, {"udp", 2049}}}}},
		{name: "ports: a protocol-wide entry covers a port",
			rules: []Rule{{Ref: "u#0", Priority: 10700, Ports: []Port{{"tcp", 0}, {"udp", 2049}}}, {Ref: "l#0", Priority: 10500, DSCP: 3, Ports: []Port{{"tcp", 2049}, {"udp", 2049}}}},
			want:  []string{"l#0 u#0: mark (DSCP 3) lost"}},
		{name: "a selector destination is never covered by blocks, never covers",
			rules: []Rule{{Ref: "s#0", Priority: 10700, Selectors: true}, {Ref: "b#0", Priority: 10600, Blocks: []Block{block("10.0.0.0/8")}}, {Ref: "t#0", Priority: 10500, Selectors: true}}},
		{name: "a v4 block does not cover a v6 block",
			rules: []Rule{{Ref: "v4#0", Priority: 10700, Blocks: []Block{block("10.0.0.0/8")}}, {Ref: "v6#0", Priority: 10500, Blocks: []Block{block("fd00::/8")}}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var got []string
			for _, s := range Shadows("vms/a", tc.rules, tc.split) {
				if s.VM != "vms/a" {
					t.Errorf("VM %q", s.VM)
				}
				got = append(got, s.Rule+" "+s.By+": "+s.Consequence)
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("shadowed:\n got  %q\n want %q", got, tc.want)
			}
		})
	}
}
