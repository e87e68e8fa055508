package ovntrace

import (
	"fmt"
	"net"
	"net/netip"
	"regexp"
	"strconv"
	"strings"
)

// Proto is the L4 protocol of a microflow.
type Proto string

// Protocols a microflow can carry.
const (
	ProtoTCP  Proto = "tcp"
	ProtoUDP  Proto = "udp"
	ProtoSCTP Proto = "sctp"
	ProtoICMP Proto = "icmp"
)

// ParseProto accepts tcp, udp, sctp or icmp in any letter case.
func ParseProto(s string) (Proto, error) {
	p := Proto(strings.ToLower(strings.TrimSpace(s)))
	switch p {
	case ProtoTCP, ProtoUDP, ProtoSCTP, ProtoICMP:
		return p, nil
	}
	return "", fmt.Errorf("protocol %q: want tcp, udp, sctp or icmp", s)
}

// DefaultTTL is the ip.ttl traced when a Microflow leaves TTL zero.
const DefaultTTL = 64

// Microflow is one packet to trace through a logical switch. ICMP is an
// echo request (ICMPv4 type 8, ICMPv6 type 128).
type Microflow struct {
	Datapath string // logical switch name
	InPort   string // logical switch port the packet enters by
	EthSrc   net.HardwareAddr
	EthDst   net.HardwareAddr
	Src      netip.Addr // IPv4 or IPv6, same family as Dst
	Dst      netip.Addr
	Proto    Proto
	SrcPort  uint16 // optional; tcp, udp, sctp only
	DstPort  uint16 // required for tcp, udp, sctp; zero for icmp
	TTL      uint8  // zero means DefaultTTL
}

// ovnName is what this package lets through as a datapath or port name:
// the characters OVN-Kubernetes and the harness use in switch and LSP
// names, and nothing that needs quoting inside an OVN string literal.
var ovnName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.:/@+-]{0,253}$`)

// Validate checks every field and names the first bad one.
func (m Microflow) Validate() error {
	if !ovnName.MatchString(m.Datapath) {
		return fmt.Errorf("microflow datapath %q: not a plain OVN name", m.Datapath)
	}
	if !ovnName.MatchString(m.InPort) {
		return fmt.Errorf("microflow %s inport %q: not a plain OVN name", m.Datapath, m.InPort)
	}
	for _, f := range []struct {
		name string
		mac  net.HardwareAddr
	}{{"eth.src", m.EthSrc}, {"eth.dst", m.EthDst}} {
		if len(f.mac) != 6 {
			return fmt.Errorf("microflow %s %s %q: want a 48-bit MAC", m.InPort, f.name, f.mac)
		}
	}
	if err := m.validateIPs(); err != nil {
		return err
	}
	return m.validateL4()
}

func (m Microflow) validateIPs() error {
	for _, f := range []struct {
		name string
		ip   netip.Addr
	}{{"src", m.Src}, {"dst", m.Dst}} {
		if !f.ip.IsValid() || f.ip.Zone() != "" || f.ip.Is4In6() {
			return fmt.Errorf("microflow %s ip %s %q: want a plain IPv4 or IPv6 address", m.InPort, f.name, f.ip)
		}
	}
	if m.Src.Is4() != m.Dst.Is4() {
		return fmt.Errorf("microflow %s ip: src %s and dst %s are different families", m.InPort, m.Src, m.Dst)
	}
	return nil
}

func (m Microflow) validateL4() error {
	switch m.Proto {
	case ProtoTCP, ProtoUDP, ProtoSCTP:
		if m.DstPort == 0 {
			return fmt.Errorf("microflow %s %s: dst port missing", m.InPort, m.Proto)
		}
	case ProtoICMP:
		if m.DstPort != 0 || m.SrcPort != 0 {
			return fmt.Errorf("microflow %s icmp: ports %d/%d given, icmp has none", m.InPort, m.SrcPort, m.DstPort)
		}
	default:
		return fmt.Errorf("microflow %s protocol %q: want tcp, udp, sctp or icmp", m.InPort, m.Proto)
	}
	return nil
}

// Expr is the ovn-trace microflow expression, built only from the
// validated, re-formatted field values.
func (m Microflow) Expr() (string, error) {
	if err := m.Validate(); err != nil {
		return "", err
	}
	fam := "ip6"
	if m.Src.Is4() {
		fam = "ip4"
	}
	ttl := m.TTL
	if ttl == 0 {
		ttl = DefaultTTL
	}
	terms := []string{
		"inport == " + strconv.Quote(m.InPort),
		"eth.src == " + m.EthSrc.String(),
		"eth.dst == " + m.EthDst.String(),
		fam + ".src == " + m.Src.String(),
		fam + ".dst == " + m.Dst.String(),
		"ip.ttl == " + strconv.Itoa(int(ttl)),
	}
	return strings.Join(append(terms, m.l4Terms()...), " && "), nil
}

func (m Microflow) l4Terms() []string {
	if m.Proto == ProtoICMP {
		if m.Src.Is4() {
			return []string{"icmp4", "icmp4.type == 8", "icmp4.code == 0"}
		}
		return []string{"icmp6", "icmp6.type == 128", "icmp6.code == 0"}
	}
	p := string(m.Proto)
	terms := []string{p}
	if m.SrcPort != 0 {
		terms = append(terms, p+".src == "+strconv.Itoa(int(m.SrcPort)))
	}
	return append(terms, p+".dst == "+strconv.Itoa(int(m.DstPort)))
}

// String is a short human description for reports.
func (m Microflow) String() string {
	port := ""
	if m.DstPort != 0 {
		port = ":" + strconv.Itoa(int(m.DstPort))
	}
	return fmt.Sprintf("%s/%s %s -> %s %s%s", m.Datapath, m.InPort, m.Src, m.Dst, m.Proto, port)
}
