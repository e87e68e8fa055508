package scenarios

import (
	"net/netip"
	"regexp"
	"slices"
	"strings"
)

// matchToken splits an OVN match into operators, brackets, commas and
// operands.
var matchToken = regexp.MustCompile(`==|!=|<=|>=|&&|\|\||[{}(),!<>]|[^\s{}(),!<>=&|]+`)

// CanonicalMatch rewrites an OVN match so that spellings OVN treats as
// equal compare equal as text: a host prefix (/32, /128) is the bare
// address, IPv6 addresses are in RFC 5952 form, a {…} set is sorted with
// duplicates and commas dropped, and whitespace is normalised.
func CanonicalMatch(m string) string {
	toks := matchToken.FindAllString(m, -1)
	var out []string
	for i := 0; i < len(toks); i++ {
		if toks[i] != "{" {
			out = append(out, canonicalOperand(toks[i]))
			continue
		}
		var set []string
		for i++; i < len(toks) && toks[i] != "}"; i++ {
			if toks[i] != "," {
				set = append(set, canonicalOperand(toks[i]))
			}
		}
		slices.Sort(set)
		out = append(out, "{")
		out = append(out, slices.Compact(set)...)
		out = append(out, "}")
	}
	return strings.Join(out, " ")
}

// SameMatch reports whether two OVN matches are equal after
// CanonicalMatch.
func SameMatch(a, b string) bool { return CanonicalMatch(a) == CanonicalMatch(b) }

func canonicalOperand(t string) string {
	if p, err := netip.ParsePrefix(t); err == nil {
		if p.Bits() == p.Addr().BitLen() {
			return p.Addr().String()
		}
		return p.String()
	}
	if a, err := netip.ParseAddr(t); err == nil {
		return a.String()
	}
	return t
}
