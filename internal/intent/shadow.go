package intent

import (
	"cmp"
	"fmt"
	"net/netip"
	"slices"

	"github.com/nqos/nqos/internal/qos"
)

// Shadowed is a rule selecting a VM that can never win any of its
// packets: a rule of higher OVN priority selecting the same VM matches
// everything it does.
type Shadowed struct {
	VM   string `json:"vm"`
	Rule string `json:"rule"`
	By   string `json:"by"`
	// Consequence is what the rule loses on the OVN version: its mark
	// always; its meter too unless OVN meters in a stage of its own.
	Consequence string `json:"-"`
}

// Shadows lists, for one VM, each rule covered by a rule of strictly
// higher priority (the highest such rule is the one named), sorted.
// splitStages says the OVN version marks and meters in separate stages
// (before 24.09), where a shadowed rule's meter still applies unless a
// higher-priority metered rule covers it too.
func Shadows(vm string, rules []Rule, splitStages bool) []Shadowed {
	byPrio := slices.Clone(rules)
	slices.SortStableFunc(byPrio, func(a, b Rule) int { return cmp.Compare(b.Priority, a.Priority) })
	var out []Shadowed
	for i, r := range byPrio {
		for _, s := range byPrio[:i] {
			if s.Priority > r.Priority && covers(s, r) {
				out = append(out, Shadowed{VM: vm, Rule: r.Ref, By: s.Ref, Consequence: consequence(r, byPrio[:i], splitStages)})
				break
			}
		}
	}
	slices.SortFunc(out, func(a, b Shadowed) int { return cmp.Or(cmp.Compare(a.VM, b.VM), cmp.Compare(a.Rule, b.Rule)) })
	return out
}

// covers reports whether every packet rule r matches also matches rule s.
func covers(s, r Rule) bool {
	if s.Selectors || (r.Selectors && len(s.Blocks) > 0) {
		return false
	}
	return coversDests(s.Blocks, r.Blocks) && coversPorts(s.Ports, r.Ports)
}

// coversDests: no blocks means every destination of both families.
func coversDests(s, r []Block) bool { return qos.ListCovers(s, r, blockCovers) }

// blockCovers: b's addresses lie inside c and outside c's excepts, save
// where b excepts them itself.
func blockCovers(c, b Block) bool {
	if !prefixWithin(b.CIDR, c.CIDR) {
		return false
	}
	for _, e := range c.Except {
		if e.Overlaps(b.CIDR) && !slices.ContainsFunc(b.Except, func(x netip.Prefix) bool { return prefixWithin(e, x) }) {
			return false
		}
	}
	return true
}

func prefixWithin(inner, outer netip.Prefix) bool {
	return inner.Addr().Is4() == outer.Addr().Is4() && outer.Bits() <= inner.Bits() && outer.Contains(inner.Masked().Addr())
}

// coversPorts: no ports means every protocol and port.
func coversPorts(s, r []Port) bool {
	return qos.ListCovers(s, r, func(q, p Port) bool { return q.Protocol == p.Protocol && (q.Port == 0 || q.Port == p.Port) })
}

// consequence says what shadowed rule r loses given the rules above it.
func consequence(r Rule, above []Rule, splitStages bool) string {
	mark := fmt.Sprintf("mark (DSCP %d) lost", r.DSCP)
	switch {
	case r.RateKbps == 0:
		return mark
	case !splitStages:
		return mark + fmt.Sprintf(", cap (%d kbps) lost: one QoS stage, the winning row marks and meters", r.RateKbps)
	}
	for _, s := range above {
		if s.RateKbps > 0 && s.Priority > r.Priority && covers(s, r) {
			return mark + fmt.Sprintf(", cap (%d kbps) lost to %s's meter", r.RateKbps, s.Ref)
		}
	}
	return mark + fmt.Sprintf(", cap (%d kbps) kept: the meter is a stage of its own", r.RateKbps)
}
