package flow

import (
	"net/netip"
	"strings"
	"testing"
)

func TestValidate(t *testing.T) {
	v4 := netip.MustParseAddr("10.0.0.1")
	v6 := netip.MustParseAddr("fd00::1")
	cases := []struct {
		name    string
		spec    Spec
		wantErr string
	}{
		{"ok udp", Spec{Name: "a", Protocol: UDP, SrcIP: v4, DstIP: v4, DstPort: 5201}, ""},
		{"ok icmp6", Spec{Name: "b", Protocol: ICMP, SrcIP: v6, DstIP: v6}, ""},
		{"bad proto", Spec{Name: "c", Protocol: "gre", SrcIP: v4, DstIP: v4}, `flow "c": field Protocol`},
		{"mixed family", Spec{Name: "d", Protocol: UDP, SrcIP: v6, DstIP: v4}, `flow "d": field SrcIP: address fd00::1 is not ipv4`},
		{"icmp port", Spec{Name: "e", Protocol: ICMP, SrcIP: v4, DstIP: v4, DstPort: 1}, `field DstPort`},
		{"no name", Spec{Protocol: UDP, SrcIP: v4, DstIP: v4}, `field Name`},
		{"vlan", Spec{Name: "f", Protocol: TCP, SrcIP: v4, DstIP: v4, VLAN: 5000}, `field VLAN`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := c.spec.Validate()
			if c.wantErr == "" {
				if err != nil {
					t.Fatalf("unexpected error: %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), c.wantErr) {
				t.Fatalf("error = %v, want it to contain %q", err, c.wantErr)
			}
		})
	}
}

func TestValidateSetDuplicate(t *testing.T) {
	v4 := netip.MustParseAddr("10.0.0.1")
	s := Spec{Name: "x", Protocol: UDP, SrcIP: v4, DstIP: v4}
	if err := ValidateSet([]Spec{s, s}); err == nil || !strings.Contains(err.Error(), "duplicate flow name") {
		t.Fatalf("error = %v, want duplicate", err)
	}
}

func TestPayloadRoundTrip(t *testing.T) {
	b := make([]byte, 32)
	PutSeqPayload(b, 0xdeadbeef, 123456789)
	tag, seq, ok := ParseSeqPayload(b)
	if !ok || tag != 0xdeadbeef || seq != 123456789 {
		t.Fatalf("got %x %d %v", tag, seq, ok)
	}
	if _, _, ok := ParseSeqPayload(b[:15]); ok {
		t.Fatal("short payload parsed")
	}
	b[0] = 'X'
	if _, _, ok := ParseSeqPayload(b); ok {
		t.Fatal("bad magic parsed")
	}
}

func TestExpectBurstDefault(t *testing.T) {
	e := Expect{MaxRateKbps: 100000}
	if e.BurstBits() != 1e8 || e.RateBits() != 1e8 {
		t.Fatalf("burst %v rate %v", e.BurstBits(), e.RateBits())
	}
	e.BurstKbits = 5000
	if e.BurstBits() != 5e6 {
		t.Fatalf("burst %v", e.BurstBits())
	}
}
