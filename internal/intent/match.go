package intent

import (
	"fmt"
	"net/netip"
	"strconv"
	"strings"
)

// Packet is the first packet of a flow as the compiled intent sees it:
// the fields the compiler's QoS matches can test.
type Packet struct {
	InPort   string // the logical switch port it enters by
	Src, Dst netip.Addr
	Protocol string // tcp, udp, sctp or icmp
	DstPort  int
}

// matchEnv resolves @port_group and $address_set references.
type matchEnv struct {
	portGroups map[string][]string // port group -> member LSPs
	addrSets   map[string][]string // address set -> addresses or CIDRs
}

// evalMatch evaluates an OVN match of the subset the compiler writes
// (&&, ||, !, parentheses, ==/!=/<=/>=/</> against literals, {sets},
// @port_group and $address_set) for the packet. Anything else is an
// error naming the unsupported token, never a silent false.
func evalMatch(match string, p Packet, env matchEnv) (bool, error) {
	toks, err := tokenize(match)
	if err != nil {
		return false, fmt.Errorf("match %q: %w", match, err)
	}
	return evalTokens(match, toks, p, env)
}

// evalTokens evaluates a tokenized match (tokenize's output) for p.
func evalTokens(match string, toks []string, p Packet, env matchEnv) (bool, error) {
	e := &evaluator{toks: toks, p: p, env: env}
	v, err := e.or()
	if err == nil && e.i < len(e.toks) {
		err = fmt.Errorf("unexpected %q", e.toks[e.i])
	}
	if err != nil {
		return false, fmt.Errorf("match %q: %w", match, err)
	}
	return v, nil
}

func tokenize(s string) ([]string, error) {
	var out []string
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == ' ' || c == '\t':
			i++
		case strings.HasPrefix(s[i:], "&&"), strings.HasPrefix(s[i:], "||"), strings.HasPrefix(s[i:], "=="),
			strings.HasPrefix(s[i:], "!="), strings.HasPrefix(s[i:], "<="), strings.HasPrefix(s[i:], ">="):
			out = append(out, s[i:i+2])
			i += 2
		case strings.ContainsRune("(){},!<>", rune(c)):
			out = append(out, string(c))
			i++
		case c == '"':
			j := strings.IndexByte(s[i+1:], '"')
			if j < 0 {
				return nil, fmt.Errorf("unterminated string at %d", i)
			}
			out = append(out, s[i:i+j+2])
			i += j + 2
		default:
			j := i
			for j < len(s) && !strings.ContainsRune(" \t(){},!<>=&|\"", rune(s[j])) {
				j++
			}
			if j == i {
				return nil, fmt.Errorf("unexpected %q at %d", c, i)
			}
			out = append(out, s[i:j])
			i = j
		}
	}
	return out, nil
}

type evaluator struct {
	toks []string
	i    int
	p    Packet
	env  matchEnv
}

func (e *evaluator) peek() string {
	if e.i < len(e.toks) {
		return e.toks[e.i]
	}
	return ""
}

func (e *evaluator) next() string { t := e.peek(); e.i++; return t }

func (e *evaluator) or() (bool, error) {
	return e.chain("||", e.and, func(a, b bool) bool { return a || b })
}

func (e *evaluator) and() (bool, error) {
	return e.chain("&&", e.unary, func(a, b bool) bool { return a && b })
}

// chain parses operands joined by op, left to right; every operand is
// parsed (no short circuit) so a bad reference is an error wherever it is.
func (e *evaluator) chain(op string, operand func() (bool, error), combine func(a, b bool) bool) (bool, error) {
	v, err := operand()
	for err == nil && e.peek() == op {
		e.next()
		var w bool
		w, err = operand()
		v = combine(v, w)
	}
	return v, err
}

func (e *evaluator) unary() (bool, error) {
	switch e.peek() {
	case "!":
		e.next()
		v, err := e.unary()
		return !v, err
	case "(":
		e.next()
		v, err := e.or()
		if err == nil && e.next() != ")" {
			err = fmt.Errorf("missing )")
		}
		return v, err
	}
	return e.comparison()
}

// comparison is a field alone (a protocol or family predicate) or a
// field, a relational operator and a value or {set}.
func (e *evaluator) comparison() (bool, error) {
	field := e.next()
	switch op := e.peek(); op {
	case "==", "!=", "<=", ">=", "<", ">":
		e.next()
		vals, err := e.values()
		if err != nil {
			return false, err
		}
		return e.compare(field, op, vals)
	}
	return e.predicate(field)
}

func (e *evaluator) values() ([]string, error) {
	if e.peek() != "{" {
		return e.expand(e.next())
	}
	e.next()
	var out []string
	for {
		t := e.next()
		switch t {
		case "}":
			return out, nil
		case ",":
			continue
		case "":
			return nil, fmt.Errorf("missing }")
		}
		vs, err := e.expand(t)
		if err != nil {
			return nil, err
		}
		out = append(out, vs...)
	}
}

// expand resolves a $address_set to its addresses and an @port_group to
// its ports; a literal stays as it is.
func (e *evaluator) expand(t string) ([]string, error) {
	switch {
	case strings.HasPrefix(t, "$"):
		as, ok := e.env.addrSets[t[1:]]
		if !ok {
			return nil, fmt.Errorf("address set %s does not exist", t)
		}
		return as, nil
	case strings.HasPrefix(t, "@"):
		pg, ok := e.env.portGroups[t[1:]]
		if !ok {
			return nil, fmt.Errorf("port group %s does not exist", t)
		}
		return pg, nil
	case t == "":
		return nil, fmt.Errorf("missing value")
	}
	return []string{t}, nil
}

func (e *evaluator) predicate(field string) (bool, error) {
	switch field {
	case "ip4":
		return e.p.Dst.Is4(), nil
	case "ip6":
		return e.p.Dst.Is6(), nil
	case "ip":
		return true, nil
	case "tcp", "udp", "sctp":
		return e.p.Protocol == field, nil
	case "icmp", "icmp4", "icmp6":
		return e.p.Protocol == "icmp" && (field == "icmp" || (field == "icmp4") == e.p.Dst.Is4()), nil
	}
	return false, fmt.Errorf("unsupported predicate %q", field)
}

// compare: "==" holds if the field equals any value; "!=" if it equals
// none (OVN's set semantics); a field absent from the packet (ip6.dst of
// an IPv4 packet) makes the comparison false either way.
func (e *evaluator) compare(field, op string, vals []string) (bool, error) {
	fam, sub, _ := strings.Cut(field, ".")
	switch {
	case field == "inport":
		hit := false
		for _, v := range vals {
			hit = hit || strings.Trim(v, `"`) == e.p.InPort
		}
		return (op == "==") == hit, nil
	case (fam == "ip4" || fam == "ip6") && (sub == "src" || sub == "dst"):
		addr := e.p.Dst
		if sub == "src" {
			addr = e.p.Src
		}
		if addr.Is4() != (fam == "ip4") {
			return false, nil
		}
		return e.compareAddr(addr, op, vals)
	case (fam == "tcp" || fam == "udp" || fam == "sctp") && sub == "dst":
		if e.p.Protocol != fam {
			return false, nil
		}
		return comparePort(e.p.DstPort, op, vals)
	}
	return false, fmt.Errorf("unsupported field %q", field)
}

func (e *evaluator) compareAddr(addr netip.Addr, op string, vals []string) (bool, error) {
	if op != "==" && op != "!=" {
		return false, fmt.Errorf("operator %s on an address", op)
	}
	hit := false
	for _, v := range vals {
		pfx, err := netip.ParsePrefix(v)
		if err != nil {
			a, aerr := netip.ParseAddr(v)
			if aerr != nil {
				return false, fmt.Errorf("address %q: %w", v, aerr)
			}
			pfx = netip.PrefixFrom(a, a.BitLen())
		}
		hit = hit || pfx.Contains(addr)
	}
	return (op == "==") == hit, nil
}

func comparePort(port int, op string, vals []string) (bool, error) {
	hit := false
	for _, v := range vals {
		n, err := strconv.Atoi(v)
		if err != nil {
			return false, fmt.Errorf("port %q: %w", v, err)
		}
		switch op {
		case "==", "!=":
			hit = hit || port == n
		case "<=":
			hit = hit || port <= n
		case ">=":
			hit = hit || port >= n
		case "<":
			hit = hit || port < n
		case ">":
			hit = hit || port > n
		}
	}
	if op == "!=" {
		return !hit, nil
	}
	return hit, nil
}
