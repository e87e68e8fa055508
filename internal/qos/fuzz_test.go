package qos

import (
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	nadv1 "github.com/nqos/nqos/api/nad/v1"
	"github.com/nqos/nqos/api/v1alpha1"
)

// matchFields are the only field names a compiled match may contain.
var matchFields = map[string]bool{
	"inport": true, "ip4": true, "ip6": true, "ip4.dst": true, "ip6.dst": true,
	"tcp": true, "udp": true, "sctp": true, "tcp.dst": true, "udp.dst": true, "sctp.dst": true,
}

// Token kinds of a compiled match.
const (
	tkStart = iota
	tkField
	tkOp    // == !=
	tkLogic // && ||
	tkOpen  // (
	tkClose // )
	tkSetOpen
	tkSetClose
	tkComma
	tkValue // literal or @pg / $set reference
)

// follows lists which token kinds may precede each kind: a tiny grammar
// of "field [op value | op {value,...}]" terms joined by && and || with
// parentheses.
var follows = map[int][]int{
	tkField:    {tkStart, tkLogic, tkOpen},
	tkOpen:     {tkStart, tkLogic, tkOpen},
	tkOp:       {tkField},
	tkValue:    {tkOp, tkSetOpen, tkComma},
	tkSetOpen:  {tkOp},
	tkComma:    {tkValue},
	tkSetClose: {tkValue},
	tkLogic:    {tkField, tkValue, tkClose, tkSetClose},
	tkClose:    {tkField, tkValue, tkClose, tkSetClose},
}

// checkMatch tokenises a match and fails unless every token is an
// expected field, operator or punctuation, the port group, one of the
// object's address sets, or a literal that parses as an IP, a CIDR or a
// port number, in an order the grammar above allows, with balanced
// brackets.
func checkMatch(match, portGroup string, sets map[string]string) error {
	prev, depth, inSet, field := tkStart, 0, false, ""
	for i := 0; i < len(match); {
		if match[i] == ' ' {
			i++
			continue
		}
		kind, n, err := nextToken(match[i:], portGroup, sets)
		if err != nil {
			return fmt.Errorf("at %d: %w", i, err)
		}
		if !slices.Contains(follows[kind], prev) {
			return fmt.Errorf("at %d: token %q cannot follow the previous token", i, match[i:i+n])
		}
		switch kind {
		case tkField:
			field = match[i : i+n]
		case tkValue:
			if err := checkValue(field, match[i:i+n], portGroup, sets); err != nil {
				return fmt.Errorf("at %d: %w", i, err)
			}
		case tkOpen:
			depth++
		case tkClose:
			depth--
		case tkSetOpen:
			inSet = true
		case tkSetClose:
			inSet = false
		case tkComma:
			if !inSet {
				return fmt.Errorf("at %d: comma outside a set", i)
			}
		}
		if depth < 0 {
			return fmt.Errorf("at %d: unbalanced )", i)
		}
		prev = kind
		i += n
	}
	if depth != 0 || inSet || (prev != tkField && prev != tkValue && prev != tkClose && prev != tkSetClose) {
		return fmt.Errorf("incomplete match %q", match)
	}
	return nil
}

// checkValue ties a value to the field it is compared with: inport to
// the object's port group, ip4.dst to IPv4 literals and v4 address sets,
// ip6.dst to IPv6 literals (never IPv4-mapped) and v6 sets, a transport
// field to port numbers.
func checkValue(field, v, portGroup string, sets map[string]string) error {
	family := map[string]string{"ip4.dst": "v4", "ip6.dst": "v6"}[field]
	switch {
	case field == "inport":
		if v != "@"+portGroup {
			return fmt.Errorf("inport compared with %q, want @%s", v, portGroup)
		}
	case strings.HasPrefix(v, "@"):
		return fmt.Errorf("port group %s compared with %s", v, field)
	case strings.HasPrefix(v, "$"):
		if family == "" || sets[v[1:]] != family {
			return fmt.Errorf("address set %s (family %q) compared with %s", v, sets[v[1:]], field)
		}
	case family != "":
		if got := literalFamily(v); got != family {
			return fmt.Errorf("literal %s (family %q) compared with %s", v, got, field)
		}
	case strings.HasSuffix(field, ".dst"):
		if n, err := strconv.Atoi(v); err != nil || n < 1 || n > maxPort {
			return fmt.Errorf("%s compared with %q, want a port", field, v)
		}
	default:
		return fmt.Errorf("value %q after field %q, which takes none", v, field)
	}
	return nil
}

// literalFamily is "v4" or "v6" for an address or CIDR literal ("" for
// anything else, IPv4-mapped IPv6 included).
func literalFamily(v string) string {
	a, err := netip.ParseAddr(v)
	if err != nil {
		p, perr := netip.ParsePrefix(v)
		if perr != nil {
			return ""
		}
		a = p.Addr()
	}
	switch {
	case a.Is4In6():
		return ""
	case a.Is4():
		return "v4"
	}
	return "v6"
}

// nextToken classifies the token at the start of s and returns its length.
func nextToken(s, portGroup string, sets map[string]string) (kind, n int, err error) {
	for op, k := range map[string]int{"&&": tkLogic, "||": tkLogic, "==": tkOp, "!=": tkOp} {
		if strings.HasPrefix(s, op) {
			return k, 2, nil
		}
	}
	switch s[0] {
	case '(':
		return tkOpen, 1, nil
	case ')':
		return tkClose, 1, nil
	case '{':
		return tkSetOpen, 1, nil
	case '}':
		return tkSetClose, 1, nil
	case ',':
		return tkComma, 1, nil
	case '@', '$':
		word := readWhile(s[1:], isNameByte)
		if _, known := sets[word]; (s[0] == '@' && word != portGroup) || (s[0] == '$' && !known) {
			return 0, 0, fmt.Errorf("reference %c%s is not one of the object's", s[0], word)
		}
		return tkValue, 1 + len(word), nil
	}
	word := readWhile(s, func(b byte) bool { return isNameByte(b) || b == ':' || b == '/' })
	switch {
	case word == "":
		return 0, 0, fmt.Errorf("unexpected byte %q", s[0])
	case matchFields[word]:
		return tkField, len(word), nil
	case isLiteral(word):
		return tkValue, len(word), nil
	}
	return 0, 0, fmt.Errorf("token %q is neither a field nor a literal", word)
}

func isNameByte(b byte) bool {
	return b == '_' || b == '.' || b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z' || b >= '0' && b <= '9'
}

func readWhile(s string, ok func(byte) bool) string {
	n := 0
	for n < len(s) && ok(s[n]) {
		n++
	}
	return s[:n]
}

func isLiteral(w string) bool {
	if _, err := netip.ParseAddr(w); err == nil {
		return true
	}
	if _, err := netip.ParsePrefix(w); err == nil {
		return true
	}
	n, err := strconv.Atoi(w)
	return err == nil && n >= 1 && n <= maxPort
}

// fuzzFacts is a cluster with one discoverable and one ipamless network
// whose pods carry fuzzed label values and pod IPs.
func fuzzFacts(label, ip string) *Snapshot {
	mk := func(name, cfg string) *nadv1.NetworkAttachmentDefinition {
		return &nadv1.NetworkAttachmentDefinition{
			ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, Labels: map[string]string{"qos": "on"}},
			Spec:       nadv1.Spec{Config: cfg},
		}
	}
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "p", Labels: map[string]string{"app": label},
		Annotations: map[string]string{
			nadv1.NetworksAnnotation: "ipam, " + label,
			podNetworksAnnotation:    `{"ns/ipam":{"ip_addresses":[` + strconv.Quote(ip) + `]}}`,
		}}}
	return NewSnapshot(Input{Pods: []*corev1.Pod{p}, NADs: []*nadv1.NetworkAttachmentDefinition{
		mk("ipam", `{"name":"ipam","type":"ovn-k8s-cni-overlay","topology":"localnet","subnets":"10.0.0.0/8,fd00::/64"}`),
	}})
}

func fuzzObject(cidr, except, proto string, port int32, label string) *v1alpha1.NetworkQoS {
	nq := &v1alpha1.NetworkQoS{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "q"}}
	nq.Spec.Priority = 5
	nq.Spec.NetworkSelectors = v1alpha1.NetworkSelectors{{
		NetworkSelectionType: v1alpha1.NetworkAttachmentDefinitions,
		NetworkAttachmentDefinitionSelector: &v1alpha1.NetworkAttachmentDefinitionSelector{
			NetworkSelector: metav1.LabelSelector{MatchLabels: map[string]string{"qos": "on"}},
		},
	}}
	nq.Spec.PodSelector = metav1.LabelSelector{MatchLabels: map[string]string{"app": label}}
	nq.Spec.Egress = []v1alpha1.Rule{{DSCP: int(port) % 70, Classifier: &v1alpha1.Classifier{
		To: []v1alpha1.Destination{
			{IPBlock: &v1alpha1.IPBlock{CIDR: cidr, Except: []string{except}}},
			{PodSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": label}}},
		},
		Ports: []*v1alpha1.Port{{Protocol: proto, Port: &port}},
	}}}
	return nq
}

// checkResult verifies every match of a result and that an invalid CIDR
// or protocol never compiles.
func checkResult(t *testing.T, r Result) {
	t.Helper()
	if r.Err != nil {
		if len(r.QoS)+len(r.PortGroups)+len(r.AddressSets) != 0 {
			t.Fatalf("rows despite error %v", r.Err)
		}
		return
	}
	sets := map[string]string{}
	for _, as := range r.AddressSets {
		sets[as.Name] = as.ExternalIDs[IPFamilyKey]
		for _, a := range as.Addresses {
			if _, err := netip.ParseAddr(a); err != nil || strings.ContainsAny(a, "%/") {
				t.Fatalf("address %q in set %s", a, as.Name)
			}
		}
	}
	pgs := map[string]string{}
	for _, pg := range r.PortGroups {
		pgs[pg.ExternalIDs[NetworkKey]] = pg.Name
	}
	for _, q := range r.QoS {
		if err := checkMatch(q.Match, pgs[q.ExternalIDs[NetworkKey]], sets); err != nil {
			t.Fatalf("match %q: %v", q.Match, err)
		}
	}
}

func FuzzMatch(f *testing.F) {
	f.Add("10.20.0.0/16", "10.20.5.0/24", "TCP", int32(2049), "db", "10.0.0.5/8")
	f.Add("fd00::/64", "fd00::1/128", "UDP", int32(53), "x", "fd00::5/64")
	f.Add("10.0.0.0/8 || 1", "a}", "TCP && 1", int32(0), "} || ip4", "1.2.3.4%eth0")
	f.Add("::ffff:1.2.3.4/128", "::ffff:1.2.3.4/128", "SCTP", int32(65535), "", "fe80::1%eth0")
	f.Fuzz(func(t *testing.T, cidr, except, proto string, port int32, label, ip string) {
		nq := fuzzObject(cidr, except, proto, port, label)
		r := CompileObject(nq, fuzzFacts(label, ip), "")
		if _, err := netip.ParsePrefix(cidr); err != nil && r.Err == nil {
			t.Fatalf("invalid CIDR %q accepted", cidr)
		}
		if _, ok := protocols[proto]; !ok && r.Err == nil {
			t.Fatalf("invalid protocol %q accepted", proto)
		}
		checkResult(t, r)
	})
}

// FuzzDecodeCompile feeds arbitrary manifests through the strict decoder
// and the compiler: no panic, and every compiled match stays in grammar.
func FuzzDecodeCompile(f *testing.F) {
	files, _ := filepath.Glob("testdata/*.yaml")
	for _, file := range files {
		if b, err := os.ReadFile(file); err == nil {
			f.Add(b)
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		in, err := DecodeManifests(strings.NewReader(string(data)), "fuzz")
		if err != nil {
			return
		}
		for _, r := range CompileAll(in) {
			checkResult(t, r)
		}
	})
}

// FuzzRewriteLegacyMatch: no panic; a rewrite keeps everything after the
// legacy source byte for byte and is idempotent.
func FuzzRewriteLegacyMatch(f *testing.F) {
	f.Add("(ip4.src == {$a1} || ip6.src == {$a2}) && ip4.dst == 10.0.0.0/8")
	f.Add("ip4.src == {$a1}")
	f.Add("inport == @pg && (ip4 || ip6)")
	f.Fuzz(func(t *testing.T, match string) {
		got, sets, ok := RewriteLegacyMatch(match, "pg")
		if !ok {
			return
		}
		if !strings.HasPrefix(got, "inport == @pg && ") || len(sets) == 0 {
			t.Fatalf("%q -> %q %v", match, got, sets)
		}
		rest := strings.TrimPrefix(got, "inport == @pg")
		if rest != " && (ip4 || ip6)" && !strings.HasSuffix(match, rest) {
			t.Fatalf("%q -> %q changed the remainder", match, got)
		}
		if _, _, again := RewriteLegacyMatch(got, "pg"); again {
			t.Fatalf("rewrite of %q is not idempotent", got)
		}
	})
}

func TestCheckMatchRejectsInjection(t *testing.T) {
	sets := map[string]string{"a1": "v4", "a6": "v6"}
	bad := []string{
		"inport == @pg && ip4.dst == fd00::/64",
		"inport == @pg && ip6.dst == 10.0.0.0/8",
		"inport == @pg && ip6.dst == ::ffff:10.0.0.1",
		"inport == @pg && ip4.dst == {$a6}",
		"inport == @pg && ip6.dst == {10.0.0.1,fd00::1}",
		"inport == @pg && tcp && tcp.dst == 10.0.0.1",
		"inport == 10.0.0.1 && ip4",
		"inport == @pg && ip4.dst == @pg",
		"inport == @pg && ip4.dst == 10.0.0.0/8 || 1",
		"inport == @pg && outport == \"x\"",
		"inport == @other && (ip4 || ip6)",
		"inport == @pg && ip4.dst == {$a2}",
		"inport == @pg && (ip4 || ip6",
		"inport == @pg && tcp.dst == 70000",
	}
	for _, m := range bad {
		if err := checkMatch(m, "pg", sets); err == nil {
			t.Errorf("checkMatch accepted %q", m)
		}
	}
	if err := checkMatch("inport == @pg && (ip4.dst == {$a1} || ip6.dst == {$a6} || ip6.dst == fd00::/64) && ((tcp && tcp.dst == {80,443}) || (udp))", "pg", sets); err != nil {
		t.Errorf("good match rejected: %v", err)
	}
}
