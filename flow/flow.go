// Package flow owns the flow specification shared by the traffic drivers
// (iperf3, raw packet injection) and the capture analysis and verdicts: one
// Spec describes what is sent, one Expect describes what must be observed.
package flow

import (
	"errors"
	"fmt"
	"hash/fnv"
	"net/netip"
	"time"
)

// Protocol is the L4 protocol of a flow.
type Protocol string

// Supported protocols.
const (
	TCP  Protocol = "tcp"
	UDP  Protocol = "udp"
	SCTP Protocol = "sctp"
	ICMP Protocol = "icmp" // ICMP echo for IPv4, ICMPv6 echo for IPv6
)

// Family is the IP family of a flow.
type Family string

// Supported families.
const (
	IPv4 Family = "ipv4"
	IPv6 Family = "ipv6"
)

// Spec describes one flow: who sends what to whom, how fast and how long.
type Spec struct {
	Name     string        // unique within a scenario; used in reports and verdicts
	From     string        // sending VM or host name
	To       string        // receiving host name or IP literal
	SrcIP    netip.Addr    // source address put on the wire (may be spoofed for raw flows)
	DstIP    netip.Addr    // destination address
	Protocol Protocol      // tcp, udp, sctp or icmp
	SrcPort  uint16        // 0 = any source port (iperf3 picks one)
	DstPort  uint16        // 0 = any destination port; ICMP has none
	Family   Family        // ipv4 or ipv6; derived from DstIP when empty
	VLAN     int           // 802.1Q VID on the captured link, 0 = untagged
	Rate     uint64        // offered rate in bits per second (0 = unlimited for TCP)
	Duration time.Duration // how long traffic is offered
	Parallel int           // parallel streams (iperf3 -P), 0 or 1 = one stream
}

// Expect is what a flow must look like at the capture point after the
// readiness point. It is kept apart from Spec so the same Spec drives both
// the traffic and the verdicts.
type Expect struct {
	// DSCP, when set and Unmarked is false, must be carried by 100% of the
	// flow's packets. When Unmarked is true, no packet may carry *DSCP (or, if
	// DSCP is nil, any non-zero DSCP).
	DSCP     *int
	Unmarked bool
	// MaxRateKbps and BurstKbits describe the meter (kbps = 1000 bit/s,
	// kbit = 1000 bits), 0 = not policed. BurstKbits 0 means burst = rate.
	MaxRateKbps uint64
	BurstKbits  uint64
	// Meter names the meter this flow shares with other flows (one QoS row
	// is one meter per chassis). Empty = a meter of its own.
	Meter string
	// Undelivered: the sender is expected never to resolve the
	// destination's link-layer address, so no frame of the flow reaches
	// the capture point.
	Undelivered bool
}

// DSCPValue returns a pointer to v, for Expect.DSCP literals.
func DSCPValue(v int) *int { return &v }

// RateBits returns the policed rate in bits per second.
func (e Expect) RateBits() float64 { return float64(e.MaxRateKbps) * 1000 }

// BurstBits returns the bucket size in bits (burst defaults to the rate).
func (e Expect) BurstBits() float64 {
	if e.BurstKbits == 0 {
		return float64(e.MaxRateKbps) * 1000
	}
	return float64(e.BurstKbits) * 1000
}

// Policed reports whether the expectation includes a meter.
func (e Expect) Policed() bool { return e.MaxRateKbps > 0 }

// MeterKey returns the name of the meter group the flow is judged in.
func (e Expect) MeterKey(flowName string) string {
	if e.Meter != "" {
		return e.Meter
	}
	return flowName
}

// FamilyOf returns the flow's family, derived from DstIP or SrcIP when unset.
func (s Spec) FamilyOf() Family {
	if s.Family != "" {
		return s.Family
	}
	for _, a := range []netip.Addr{s.DstIP, s.SrcIP} {
		if a.IsValid() {
			if a.Unmap().Is4() {
				return IPv4
			}
			return IPv6
		}
	}
	return ""
}

// Tag is the 32-bit flow tag carried in raw packet payloads (FNV-32a of Name).
func (s Spec) Tag() uint32 {
	h := fnv.New32a()
	h.Write([]byte(s.Name))
	return h.Sum32()
}

// HasPorts reports whether the protocol carries ports.
func (p Protocol) HasPorts() bool { return p == TCP || p == UDP || p == SCTP }

// Validate checks the spec; errors name the flow and the field.
func (s Spec) Validate() error {
	var errs []error
	bad := func(field, format string, args ...any) {
		errs = append(errs, fmt.Errorf("flow %q: field %s: %s", s.Name, field, fmt.Sprintf(format, args...)))
	}
	if s.Name == "" {
		bad("Name", "must not be empty")
	}
	switch s.Protocol {
	case TCP, UDP, SCTP, ICMP:
	default:
		bad("Protocol", "unsupported protocol %q (want tcp, udp, sctp or icmp)", s.Protocol)
	}
	fam := s.FamilyOf()
	switch fam {
	case IPv4, IPv6:
	default:
		bad("Family", "unsupported family %q (want ipv4 or ipv6, or a DstIP to derive it)", s.Family)
	}
	for _, a := range []struct {
		field string
		addr  netip.Addr
	}{{"SrcIP", s.SrcIP}, {"DstIP", s.DstIP}} {
		if !a.addr.IsValid() {
			bad(a.field, "must be set")
			continue
		}
		if (a.addr.Unmap().Is4()) != (fam == IPv4) {
			bad(a.field, "address %s is not %s", a.addr, fam)
		}
	}
	if s.Protocol == ICMP && (s.SrcPort != 0 || s.DstPort != 0) {
		bad("DstPort", "icmp flows have no ports")
	}
	if s.VLAN < 0 || s.VLAN > 4094 {
		bad("VLAN", "%d out of range 0..4094", s.VLAN)
	}
	if s.Duration < 0 {
		bad("Duration", "negative duration %s", s.Duration)
	}
	if s.Parallel < 0 {
		bad("Parallel", "negative stream count %d", s.Parallel)
	}
	return errors.Join(errs...)
}

// ValidateSet validates every spec and checks that names and tags are unique.
func ValidateSet(specs []Spec) error {
	var errs []error
	names := map[string]bool{}
	tags := map[uint32]string{}
	for _, s := range specs {
		if err := s.Validate(); err != nil {
			errs = append(errs, err)
		}
		if names[s.Name] {
			errs = append(errs, fmt.Errorf("flow %q: field Name: duplicate flow name", s.Name))
		}
		names[s.Name] = true
		if other, ok := tags[s.Tag()]; ok && other != s.Name {
			errs = append(errs, fmt.Errorf("flow %q: field Name: payload tag collides with flow %q, rename one", s.Name, other))
		}
		tags[s.Tag()] = s.Name
	}
	return errors.Join(errs...)
}
