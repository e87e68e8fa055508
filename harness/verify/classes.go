package verify

import (
	"cmp"
	"fmt"
	"net/netip"
	"slices"
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

// VM is a VM as the class derivation sees it: its reference ("ns/name")
// and its guest addresses (one prefix per family it has).
type VM struct {
	Ref   string
	Addrs []netip.Prefix
}

// Rule is one egress rule of a NetworkQoS object selecting a VM.
type Rule struct {
	Ref      string // "ns/object#index"
	Priority int    // the OVN priority of its QoS row
	DSCP     int
	RateKbps uint32 // 0: no meter
	Blocks   []Block
	// Selectors: the rule also has pod/namespace selector destinations
	// (address sets), which the derivation does not probe.
	Selectors bool
	Ports     []Port
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
}

// unlistedPort is the first port tried for "a port no rule lists".
const unlistedPort = 5201

// probeProtocols are the protocols a probe flow can carry.
func probeProtocols() []string { return []string{"tcp", "udp"} }

// Classes derives the classes of vm under rules (the rules selecting it),
// for the families it has among fams: a destination inside each ipBlock,
// one inside each except hole, one outside every block; for each listed
// protocol/port, an unlisted port of that protocol and another protocol.
// taken are addresses no destination may use (the VMs' own). Classes are
// sorted.
func Classes(vm VM, rules []Rule, fams []Family, taken []netip.Addr) ([]Class, error) {
	var out []Class
	ports := portClasses(rules)
	for _, own := range vm.Addrs {
		fam := familyOf(own.Addr())
		if !slices.Contains(fams, fam) {
			continue
		}
		dests, err := destinations(own, rules, taken)
		if err != nil {
			return nil, fmt.Errorf("VM %s: %w", vm.Ref, err)
		}
		for _, d := range dests {
			for _, p := range ports {
				out = append(out, Class{VM: vm.Ref, Family: fam, Src: own.Addr(), Dst: d.addr,
					Protocol: p.proto, Port: p.port, Why: d.why + ", " + p.why})
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
}

// destinations are the destination classes of a VM address own: inside
// each block of own's family (outside its excepts), inside each except,
// and outside every block (in own's subnet when it has room).
func destinations(own netip.Prefix, rules []Rule, taken []netip.Addr) ([]dest, error) {
	fam := familyOf(own.Addr())
	var blocks []Block
	var out []dest
	add := func(a netip.Addr, why string) {
		if !slices.ContainsFunc(out, func(d dest) bool { return d.addr == a }) {
			out = append(out, dest{a, why})
		}
	}
	for _, r := range rules {
		for _, b := range r.Blocks {
			if familyOf(b.CIDR.Addr()) != fam {
				continue
			}
			blocks = append(blocks, b)
			a, ok := firstFree(b.CIDR, func(a netip.Addr) bool { return inAny(a, b.Except) || slices.Contains(taken, a) })
			if !ok {
				return nil, fmt.Errorf("rule %s: ipBlock %s has no address outside its excepts", r.Ref, b.CIDR)
			}
			add(a, fmt.Sprintf("inside %s %s", r.Ref, b.CIDR))
			for _, e := range b.Except {
				if a, ok := firstFree(e, func(a netip.Addr) bool { return slices.Contains(taken, a) }); ok {
					add(a, fmt.Sprintf("inside %s except %s", r.Ref, e))
				}
			}
		}
	}
	outside := func(a netip.Addr) bool {
		return slices.Contains(taken, a) || slices.ContainsFunc(blocks, func(b Block) bool { return b.CIDR.Contains(a) })
	}
	a, ok := firstFree(own.Masked(), outside)
	if !ok {
		doc := netip.MustParsePrefix("192.0.2.0/24")
		if fam == V6 {
			doc = netip.MustParsePrefix("2001:db8::/32")
		}
		if a, ok = firstFree(doc, outside); !ok {
			return nil, fmt.Errorf("address %s: no destination outside every ipBlock", own)
		}
	}
	add(a, "outside every ipBlock")
	return out, nil
}

// maxScan bounds the addresses firstFree tries in a prefix.
const maxScan = 4096

// firstFree is the first host address of p (the network address itself
// for a single-address prefix) that skip does not reject.
func firstFree(p netip.Prefix, skip func(netip.Addr) bool) (netip.Addr, bool) {
	p = p.Masked()
	a := p.Addr()
	if p.Bits() < a.BitLen() {
		a = a.Next()
	}
	for i := 0; i < maxScan && a.IsValid() && p.Contains(a); i, a = i+1, a.Next() {
		if !skip(a) {
			return a, true
		}
	}
	return netip.Addr{}, false
}

func inAny(a netip.Addr, ps []netip.Prefix) bool {
	return slices.ContainsFunc(ps, func(p netip.Prefix) bool { return p.Contains(a) })
}
