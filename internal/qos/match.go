package qos

import (
	"net/netip"
	"strconv"
	"strings"

	"github.com/nqos/nqos/internal/seeded"
)

// anyIPMatch stands in for the destination when a rule has none.
const anyIPMatch = "(ip4 || ip6)"

// destSets are the address-set names of one selector destination, by
// family ("v4"/"v6").
type destSets map[string]string

// sourceMatch is the OKEP-6815 source fragment: membership of the
// packet's logical switch port in the object's port group.
func sourceMatch(portGroup string) string { return "inport == @" + portGroup }

// portSourceMatch is the source fragment of a row for one logical switch
// port. Port names are built from Kubernetes object names (DNS labels and
// subdomains), which hold no quote or backslash.
func portSourceMatch(port string) string { return `inport == "` + port + `"` }

// buildMatch renders a rule's match after the source fragment. Only
// parsed values reach it: the port group and address-set names are
// generated hashes, CIDRs are netip prefixes and ports are integers, so no
// input can inject OVN syntax.
func buildMatch(source string, r rule, sets map[int]destSets) string {
	var b strings.Builder
	b.WriteString(source)
	b.WriteString(" && ")
	if len(r.dests) == 0 {
		b.WriteString(anyIPMatch)
	} else {
		b.WriteString(destinationsMatch(r.dests, sets))
	}
	if len(r.ports) > 0 {
		b.WriteString(" && ")
		b.WriteString(portsMatch(r.ports))
	}
	return b.String()
}

// destinationsMatch joins destinations as upstream: parts with an
// operator are parenthesised, and a top-level "||" wraps the whole.
func destinationsMatch(dests []dest, sets map[int]destSets) string {
	if len(dests) == 1 {
		return wrapIfOr(destMatch(dests[0], sets[dests[0].index]))
	}
	parts := make([]string, len(dests))
	for i, d := range dests {
		m := destMatch(d, sets[d.index])
		if strings.Contains(m, "||") || strings.Contains(m, "&&") {
			m = "(" + m + ")"
		}
		parts[i] = m
	}
	return "(" + strings.Join(parts, " || ") + ")"
}

func wrapIfOr(m string) string {
	if strings.Contains(m, "||") {
		return "(" + m + ")"
	}
	return m
}

// destMatch renders one destination without outer parentheses.
func destMatch(d dest, sets destSets) string {
	switch {
	case d.block != nil:
		return ipBlockMatch(d.block)
	case d.any:
		return "ip4.dst == 0.0.0.0/0 || ip6.dst == ::/0"
	}
	var parts []string
	for _, fam := range []string{"v4", "v6"} {
		if name, ok := sets[fam]; ok {
			parts = append(parts, familyField(fam)+".dst == {$"+name+"}")
		}
	}
	return strings.Join(parts, " || ")
}

func familyField(fam string) string {
	if fam == "v6" {
		return "ip6"
	}
	return "ip4"
}

// ipBlockMatch renders "<f>.dst == <cidr>" plus "<f>.dst != {<e>,...}".
func ipBlockMatch(b *ipBlock) string {
	f := "ip4"
	if b.cidr.Addr().Is6() {
		f = "ip6"
	}
	m := f + ".dst == " + prefixLiteral(b.cidr)
	if len(b.except) == 0 || seeded.Active == seeded.ExceptDropped {
		return m
	}
	ex := make([]string, len(b.except))
	for i, e := range b.except {
		ex[i] = prefixLiteral(e)
	}
	return m + " && " + f + ".dst != {" + strings.Join(ex, ",") + "}"
}

// prefixLiteral renders a host prefix as a bare address.
func prefixLiteral(p netip.Prefix) string {
	if p.IsSingleIP() {
		return p.Addr().String()
	}
	return p.String()
}

// portsMatch renders "tcp && tcp.dst == 80" for one protocol and
// "((tcp && ...) || (udp ...))" for several.
func portsMatch(ports []protoPorts) string {
	frags := make([]string, len(ports))
	for i, pp := range ports {
		frags[i] = protoMatch(pp)
	}
	if len(frags) == 1 {
		return frags[0]
	}
	return "((" + strings.Join(frags, ") || (") + "))"
}

func protoMatch(pp protoPorts) string {
	switch len(pp.ports) {
	case 0:
		return pp.proto
	case 1:
		return pp.proto + " && " + pp.proto + ".dst == " + strconv.Itoa(pp.ports[0])
	}
	s := make([]string, len(pp.ports))
	for i, p := range pp.ports {
		s[i] = strconv.Itoa(p)
	}
	return pp.proto + " && " + pp.proto + ".dst == {" + strings.Join(s, ",") + "}"
}
