package intent

import (
	"cmp"
	"fmt"
	"net/netip"
	"slices"
	"strings"
)

// Family is an IP family: "v4" or "v6".
type Family string

// IP families.
const (
	V4 Family = "v4"
	V6 Family = "v6"
)

func familyOf(a netip.Addr) Family {
	if a.Is4() {
		return V4
	}
	return V6
}

// Rule is one egress rule of a NetworkQoS object selecting a VM.
type Rule struct {
	Ref      string // "ns/object#index"
	Priority int    // the OVN priority of its QoS row
	DSCP     int
	RateKbps uint32 // 0: no meter
	Blocks   []Block
	// Selectors: the rule also has pod/namespace selector destinations
	// (address sets); Selected are the addresses its compiled row's
	// address sets hold on the VM's switch, each a destination class.
	Selectors bool
	Selected  []Selected
	Ports     []Port
}

// Selected is an address of a selector destination's address set, with
// the VM holding it ("" for a pod that is no VM of the set).
type Selected struct {
	Addr netip.Addr
	VM   string
}

// Block is an ipBlock destination with its except holes.
type Block struct {
	CIDR   netip.Prefix
	Except []netip.Prefix
}

// Port is a classifier port: Port 0 means every port of the protocol.
type Port struct {
	Protocol string // tcp, udp or sctp
	Port     int
}

// Class is one kind of traffic a VM sends: what the probe of it carries.
type Class struct {
	VM       string // VM reference
	Family   Family
	Src, Dst netip.Addr
	Protocol string
	Port     int
	Why      string // the destination's and port's reason, e.g. "inside ns/o#1 10.20.0.0/16"
	// DstVM is the VM the destination address belongs to (a selector
	// destination's member), "" for an address outside the set's VMs.
	DstVM string
}

// unlistedPort is the first port tried for "a port no rule lists".
const unlistedPort = 5201

// probeProtocols are the protocols a probe flow can carry.
func probeProtocols() []string { return []string{"tcp", "udp"} }

// Deriver derives classes for the VMs of one set: it knows the
// addresses no destination may use (the VMs' own) and remembers the
// destinations it found, which every VM with the same subnet and blocks
// shares.
type Deriver struct {
	taken map[netip.Addr]bool
	memo  map[string]netip.Addr
}

// NewDeriver is a Deriver that never picks an address of taken.
func NewDeriver(taken []netip.Addr) *Deriver {
	d := &Deriver{taken: make(map[netip.Addr]bool, len(taken)), memo: map[string]netip.Addr{}}
	for _, a := range taken {
		d.taken[a] = true
	}
	return d
}

// Classes derives the classes of vm under rules (the rules selecting it),
// for the families it has among fams: a destination inside each ipBlock,
// one inside each except hole, one outside every block where an address
// is (a block of the whole family has no outside); for each listed
// protocol/port, an unlisted port of that protocol and another protocol.
// Classes are sorted.
func (d *Deriver) Classes(vm VM, rules []Rule, fams []Family) ([]Class, error) {
	var out []Class
	ports := portClasses(rules)
	owns := vm.Addrs
	if vm.Unknown {
		owns = nil
		for _, f := range fams {
			owns = append(owns, netip.PrefixFrom(documentation(f)[0].Addr(), documentation(f)[0].Bits()))
		}
	}
	for _, own := range owns {
		fam := familyOf(own.Addr())
		if !slices.Contains(fams, fam) {
			continue
		}
		src := own.Addr()
		if vm.Unknown {
			src = netip.Addr{}
		}
		dests, err := d.destinations(own, rules)
		if err != nil {
			return nil, fmt.Errorf("VM %s: %w", vm.Ref, err)
		}
		for _, dst := range dests {
			for _, p := range ports {
				out = append(out, Class{VM: vm.Ref, Family: fam, Src: src, Dst: dst.addr,
					Protocol: p.proto, Port: p.port, Why: dst.why + ", " + p.why, DstVM: dst.vm})
			}
		}
	}
	slices.SortFunc(out, compareClass)
	return out, nil
}

func compareClass(a, b Class) int {
	return cmp.Or(cmp.Compare(a.VM, b.VM), cmp.Compare(a.Family, b.Family), a.Dst.Compare(b.Dst),
		cmp.Compare(a.Protocol, b.Protocol), cmp.Compare(a.Port, b.Port))
}

type portClass struct {
	proto string
	port  int
	why   string
}

// portClasses are the protocol/port classes of a VM's rules: each
// listed port (a protocol-only entry gets an unlisted port), an unlisted
// port of each listed protocol, and a protocol no rule lists.
func portClasses(rules []Rule) []portClass {
	listed := map[string][]int{}
	for _, r := range rules {
		for _, p := range r.Ports {
			if slices.Contains(probeProtocols(), p.Protocol) {
				listed[p.Protocol] = append(listed[p.Protocol], p.Port)
			}
		}
	}
	if len(listed) == 0 {
		return []portClass{{"udp", unlistedPort, "any port"}}
	}
	var out []portClass
	for _, proto := range probeProtocols() {
		ps, ok := listed[proto]
		if !ok {
			out = append(out, portClass{proto, unlistedPort, "protocol no rule lists"})
			continue
		}
		for _, p := range slices.Compact(slices.Sorted(slices.Values(ps))) {
			if p != 0 {
				out = append(out, portClass{proto, p, fmt.Sprintf("listed %s/%d", proto, p)})
			}
		}
		free := unlistedPort
		for slices.Contains(ps, free) {
			free++
		}
		out = append(out, portClass{proto, free, "port no rule lists"})
	}
	return out
}

type dest struct {
	addr netip.Addr
	why  string
	vm   string
}

// destinations are the destination classes of a VM address own: inside
// each block of own's family (outside its excepts), inside each except,
// each address a selector destination selects (but own), and outside
// every block and selected address (in own's subnet when it has room,
// else in a documentation range) when any address is.
func (d *Deriver) destinations(own netip.Prefix, rules []Rule) ([]dest, error) {
	fam := familyOf(own.Addr())
	var blocks []netip.Prefix
	var out []dest
	add := func(a netip.Addr, why string) {
		if !slices.ContainsFunc(out, func(x dest) bool { return x.addr == a }) {
			out = append(out, dest{addr: a, why: why})
		}
	}
	for _, r := range rules {
		for _, s := range r.Selected {
			if familyOf(s.Addr) != fam || s.Addr == own.Addr() {
				continue
			}
			blocks = append(blocks, netip.PrefixFrom(s.Addr, s.Addr.BitLen()))
			if !slices.ContainsFunc(out, func(x dest) bool { return x.addr == s.Addr }) {
				out = append(out, dest{addr: s.Addr, why: selectedWhy(r.Ref, s), vm: s.VM})
			}
		}
	}
	for _, r := range rules {
		for _, b := range r.Blocks {
			if familyOf(b.CIDR.Addr()) != fam {
				continue
			}
			blocks = append(blocks, b.CIDR)
			a, ok := d.first(preferred(b.CIDR), b.Except)
			if !ok {
				return nil, fmt.Errorf("rule %s: ipBlock %s has no address outside its excepts", r.Ref, b.CIDR)
			}
			add(a, fmt.Sprintf("inside %s %s", r.Ref, b.CIDR))
			for _, e := range b.Except {
				if a, ok := d.first(preferred(e), nil); ok {
					add(a, fmt.Sprintf("inside %s except %s", r.Ref, e))
				}
			}
		}
	}
	if a, ok := d.first(append([]netip.Prefix{own.Masked()}, documentation(fam)...), blocks); ok {
		add(a, "outside every ipBlock")
	}
	return out, nil
}

func selectedWhy(rule string, s Selected) string {
	if s.VM == "" {
		return fmt.Sprintf("selected by %s (address %s)", rule, s.Addr)
	}
	return fmt.Sprintf("selected by %s (VM %s)", rule, s.VM)
}

// preferred are the ranges a destination inside p is sought in: the
// documentation ranges p holds whole (so a block of the whole family
// yields 192.0.2.1, not 0.0.0.1), then p.
func preferred(p netip.Prefix) []netip.Prefix {
	var out []netip.Prefix
	for _, doc := range documentation(familyOf(p.Addr())) {
		if within(doc, p) {
			out = append(out, doc)
		}
	}
	return append(out, p.Masked())
}

// documentation are the address ranges reserved for examples (RFC 5737,
// RFC 3849): destinations no real network uses.
func documentation(f Family) []netip.Prefix {
	if f == V6 {
		return []netip.Prefix{netip.MustParsePrefix("2001:db8::/32")}
	}
	return []netip.Prefix{netip.MustParsePrefix("192.0.2.0/24"), netip.MustParsePrefix("198.51.100.0/24"),
		netip.MustParsePrefix("203.0.113.0/24")}
}

// unusable are the ranges a probe cannot be sent to: "this network",
// loopback, link-local, multicast and reserved ranges.
func unusable(f Family) []netip.Prefix {
	if f == V6 {
		return []netip.Prefix{netip.MustParsePrefix("::/8"), netip.MustParsePrefix("100::/64"),
			netip.MustParsePrefix("fe80::/10"), netip.MustParsePrefix("ff00::/8")}
	}
	return []netip.Prefix{netip.MustParsePrefix("0.0.0.0/8"), netip.MustParsePrefix("127.0.0.0/8"),
		netip.MustParsePrefix("169.254.0.0/16"), netip.MustParsePrefix("224.0.0.0/3")}
}

// within reports whether inner lies inside outer.
func within(inner, outer netip.Prefix) bool {
	return inner.Addr().Is4() == outer.Addr().Is4() && outer.Bits() <= inner.Bits() && outer.Contains(inner.Masked().Addr())
}

// first is the first usable host address of the first of ranges that
// has one outside avoid and the taken addresses (remembered).
func (d *Deriver) first(ranges, avoid []netip.Prefix) (netip.Addr, bool) {
	var key strings.Builder
	for _, p := range ranges {
		key.WriteString(p.String() + " ")
	}
	key.WriteString("-")
	for _, p := range avoid {
		key.WriteString(" " + p.String())
	}
	if a, ok := d.memo[key.String()]; ok {
		return a, a.IsValid()
	}
	var a netip.Addr
	for _, r := range ranges {
		if x, ok := d.firstIn(r, avoid); ok {
			a = x
			break
		}
	}
	d.memo[key.String()] = a
	return a, a.IsValid()
}

// maxTaken bounds the taken addresses firstIn steps over in a row.
const maxTaken = 1 << 20

// firstIn is the first host address of p (the network address itself
// for a single-address prefix) outside avoid, the unusable ranges and the
// taken addresses: it jumps over each avoided prefix whole.
func (d *Deriver) firstIn(p netip.Prefix, avoid []netip.Prefix) (netip.Addr, bool) {
	p = p.Masked()
	skip := append(slices.Clone(avoid), unusable(familyOf(p.Addr()))...)
	a := p.Addr()
	if p.Bits() < a.BitLen() {
		a = a.Next()
	}
	for steps := 0; a.IsValid() && p.Contains(a) && steps < maxTaken; steps++ {
		i := slices.IndexFunc(skip, func(s netip.Prefix) bool { return s.Contains(a) })
		switch {
		case i >= 0:
			a = lastOf(skip[i]).Next()
		case d.taken[a]:
			a = a.Next()
		default:
			return a, true
		}
	}
	return netip.Addr{}, false
}

// lastOf is the last address of p.
func lastOf(p netip.Prefix) netip.Addr {
	p = p.Masked()
	b := p.Addr().AsSlice()
	for i := p.Bits(); i < len(b)*8; i++ {
		b[i/8] |= 0x80 >> (i % 8)
	}
	a, _ := netip.AddrFromSlice(b)
	return a
}
