package kernel

import (
	"net/netip"
	"testing"

	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netlink/nl"
	"golang.org/x/sys/unix"

	"github.com/nqos/nqos/internal/tc"
)

// lab is the tc HTB lab's shape at 50 Mbit/s: production 90% guaranteed,
// background 10% selected by destination, both may borrow the ceiling.
func lab() tc.HTB {
	return tc.HTB{Ceil: 50e6, Classes: []tc.Class{
		{Name: "production", Rate: 45e6, Default: true},
		{Name: "background", Rate: 5e6, Dst: []netip.Prefix{netip.MustParsePrefix("10.40.0.22/32")}},
	}}
}

func TestBuildLab(t *testing.T) {
	p := build(lab(), 7)
	if p.qdisc.Defcls != uint32(tc.LeafMinor(0)) || p.qdisc.LinkIndex != 7 || p.qdisc.Parent != netlink.HANDLE_ROOT {
		t.Fatalf("qdisc: defcls %#x link %d parent %#x", p.qdisc.Defcls, p.qdisc.LinkIndex, p.qdisc.Parent)
	}
	if len(p.classes) != 3 {
		t.Fatalf("classes: %d, want root + 2", len(p.classes))
	}
	root, prod, bg := p.classes[0], p.classes[1], p.classes[2]
	if root.Handle != handle(1) || root.Rate != 50e6/8 || root.Ceil != 50e6/8 {
		t.Errorf("root %s rate %d ceil %d B/s", netlink.HandleStr(root.Handle), root.Rate, root.Ceil)
	}
	if prod.Parent != handle(1) || prod.Rate != 45e6/8 || prod.Ceil != 50e6/8 {
		t.Errorf("production rate %d ceil %d B/s, parent %s", prod.Rate, prod.Ceil, netlink.HandleStr(prod.Parent))
	}
	if bg.Handle != handle(tc.LeafMinor(1)) || bg.Rate != 5e6/8 || bg.Ceil != 50e6/8 {
		t.Errorf("background %s rate %d ceil %d B/s", netlink.HandleStr(bg.Handle), bg.Rate, bg.Ceil)
	}
	if len(p.filters) != 1 {
		t.Fatalf("filters: %d, want 1", len(p.filters))
	}
	f := p.filters[0]
	want := nl.TcU32Key{Off: 16, Mask: 0xffffffff, Val: 0x0a280016}
	if f.ClassId != bg.Handle || f.Protocol != unix.ETH_P_IP || len(f.Sel.Keys) != 1 || f.Sel.Keys[0] != want {
		t.Errorf("filter into %s proto %#x keys %+v, want %+v into the background class", netlink.HandleStr(f.ClassId), f.Protocol, f.Sel.Keys, want)
	}
}

func TestBuildDSCPPrio(t *testing.T) {
	h := tc.HTB{Ceil: 50e6, Classes: []tc.Class{
		{Name: "ef", Rate: 30e6, Prio: 0, DSCP: []int{46}},
		{Name: "af11", Rate: 10e6, Prio: 1, DSCP: []int{10}},
		{Name: "rest", Rate: 10e6, Prio: 2, Default: true},
	}}
	if err := h.Validate(); err != nil {
		t.Fatal(err)
	}
	p := build(h, 3)
	if got := p.classes[2].Prio; got != 1 {
		t.Errorf("af11 prio %d, want 1", got)
	}
	if len(p.filters) != 4 {
		t.Fatalf("filters: %d, want 2 per DSCP value (IPv4, IPv6)", len(p.filters))
	}
	v4, v6 := p.filters[0], p.filters[1]
	if v4.Protocol != unix.ETH_P_IP || v4.Sel.Keys[0] != (nl.TcU32Key{Mask: 0x00fc0000, Val: 0x00b80000}) {
		t.Errorf("EF IPv4 filter %#x %+v: want TOS 0xb8/0xfc", v4.Protocol, v4.Sel.Keys)
	}
	if v6.Protocol != unix.ETH_P_IPV6 || v6.Sel.Keys[0] != (nl.TcU32Key{Mask: 0x0fc00000, Val: 46 << 22}) {
		t.Errorf("EF IPv6 filter %#x %+v: want traffic class 0xb8/0xfc", v6.Protocol, v6.Sel.Keys)
	}
	for i, f := range p.filters {
		if int(f.Priority) != i+1 {
			t.Errorf("filter %d has preference %d", i, f.Priority)
		}
	}
	if p.qdisc.Defcls != uint32(tc.LeafMinor(2)) {
		t.Errorf("default class %#x, want the rest class", p.qdisc.Defcls)
	}
}

func TestDstKeys(t *testing.T) {
	cases := []struct {
		prefix string
		want   []nl.TcU32Key
	}{
		{"10.20.0.0/16", []nl.TcU32Key{{Off: 16, Mask: 0xffff0000, Val: 0x0a140000}}},
		{"10.20.3.4/16", []nl.TcU32Key{{Off: 16, Mask: 0xffff0000, Val: 0x0a140000}}},
		{"0.0.0.0/0", []nl.TcU32Key{{Off: 16}}},
		{"fd00:30::/40", []nl.TcU32Key{{Off: 24, Mask: 0xffffffff, Val: 0xfd000030}, {Off: 28, Mask: 0xff000000}}},
		{"fd00:30::11/128", []nl.TcU32Key{{Off: 24, Mask: 0xffffffff, Val: 0xfd000030}, {Off: 28, Mask: 0xffffffff}, {Off: 32, Mask: 0xffffffff}, {Off: 36, Mask: 0xffffffff, Val: 0x11}}},
	}
	for _, c := range cases {
		got := dstKeys(netip.MustParsePrefix(c.prefix))
		if len(got) != len(c.want) {
			t.Errorf("%s: keys %+v, want %+v", c.prefix, got, c.want)
			continue
		}
		for i := range got {
			if got[i] != c.want[i] {
				t.Errorf("%s: key %d %+v, want %+v", c.prefix, i, got[i], c.want[i])
			}
		}
	}
}
