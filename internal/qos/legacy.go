package qos

import "strings"

// RewriteLegacyMatch rewrites a pre-OKEP-6815 QoS match whose source is an
// address set ("ip4.src == {$X}", "ip6.src == {$Y}" or
// "(ip4.src == {$X} || ip6.src == {$Y})" at the start) into the port-group
// form "inport == @<portGroup>", keeping the rest byte for byte; when
// nothing follows the source, "(ip4 || ip6)" is appended. sourceSets are
// the legacy set names. ok is false when the match has no legacy source
// fragment (already migrated, so the rewrite is idempotent) or when
// portGroup is not a valid OVN identifier.
func RewriteLegacyMatch(match, portGroup string) (newMatch string, sourceSets []string, ok bool) {
	if !isIdentifier(portGroup) {
		return "", nil, false
	}
	rest, sets, found := cutLegacySource(match)
	if !found {
		return "", nil, false
	}
	src := "inport == @" + portGroup
	switch {
	case rest == "":
		return src + " && " + anyIPMatch, sets, true
	case strings.HasPrefix(rest, " && "):
		return src + rest, sets, true
	}
	return "", nil, false
}

// cutLegacySource removes a leading legacy source fragment and returns
// the remainder and the set names.
func cutLegacySource(match string) (rest string, sets []string, ok bool) {
	if strings.HasPrefix(match, "(") {
		inner := match[1:]
		v4, after, ok4 := cutSetTerm(inner, "ip4.src")
		if !ok4 || !strings.HasPrefix(after, " || ") {
			return "", nil, false
		}
		v6, after, ok6 := cutSetTerm(after[len(" || "):], "ip6.src")
		if !ok6 || !strings.HasPrefix(after, ")") {
			return "", nil, false
		}
		return after[1:], []string{v4, v6}, true
	}
	for _, field := range []string{"ip4.src", "ip6.src"} {
		if name, after, ok := cutSetTerm(match, field); ok {
			return after, []string{name}, true
		}
	}
	return "", nil, false
}

// cutSetTerm parses "<field> == {$<name>}" at the start of s.
func cutSetTerm(s, field string) (name, rest string, ok bool) {
	prefix := field + " == {$"
	if !strings.HasPrefix(s, prefix) {
		return "", "", false
	}
	s = s[len(prefix):]
	end := strings.IndexByte(s, '}')
	if end < 0 || !isIdentifier(s[:end]) {
		return "", "", false
	}
	return s[:end], s[end+1:], true
}

// isIdentifier reports whether s is an OVN identifier: a letter or '_'
// followed by letters, digits, '_' or '.'.
func isIdentifier(s string) bool {
	if s == "" {
		return false
	}
	for i, r := range s {
		letter := r == '_' || (r >= 'a' && r <= 'z') || (r >= 'A' && r <= 'Z')
		if !letter && (i == 0 || !(r == '.' || (r >= '0' && r <= '9'))) {
			return false
		}
	}
	return true
}
