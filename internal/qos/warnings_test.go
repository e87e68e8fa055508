package qos

import (
	"strings"
	"testing"
)

// compileEgress compiles baseNetwork (localnet, selected) with egress as
// the object's rules.
func compileEgress(t *testing.T, egress string) Result {
	t.Helper()
	y := strings.NewReplacer("%TOPO%", "localnet", "%SELECTORS%", nadSelector).Replace(baseNetwork)
	y = strings.Replace(y, "  egress:\n  - dscp: 1\n", "  egress:\n"+egress, 1)
	in := decodeString(t, y)
	return CompileObject(in.NetworkQoSes[0], NewSnapshot(in), "")
}

func warningsOf(r Result, kind WarningKind) []Warning {
	var out []Warning
	for _, w := range r.Warnings {
		if w.Kind == kind {
			out = append(out, w)
		}
	}
	return out
}

// TestWarningMaskedHostBits: a CIDR with host bits set compiles to its
// network and says so, naming the field; a clean CIDR says nothing.
func TestWarningMaskedHostBits(t *testing.T) {
	r := compileEgress(t, "  - dscp: 1\n    classifier: { to: [ { ipBlock: { cidr: 10.1.2.3/8, except: [ 10.9.9.9/16 ] } } ] }\n")
	ws := warningsOf(r, WarningMaskedHostBits)
	if len(ws) != 2 || ws[0].Field != "spec.egress[0].classifier.to[0].ipBlock.cidr" ||
		!strings.Contains(ws[0].Message, "used as 10.0.0.0/8") || ws[1].Field != "spec.egress[0].classifier.to[0].ipBlock.except[0]" {
		t.Fatalf("masked-host-bit warnings = %+v", ws)
	}
	if len(r.QoS) != 1 || !strings.Contains(r.QoS[0].Match, "ip4.dst == 10.0.0.0/8") {
		t.Fatalf("rows = %+v, want the masked network in the match", r.QoS)
	}
	if clean := compileEgress(t, "  - dscp: 1\n    classifier: { to: [ { ipBlock: { cidr: 10.0.0.0/8 } } ] }\n"); len(clean.Warnings) != 0 {
		t.Fatalf("warnings for a clean CIDR: %+v", clean.Warnings)
	}
}

// TestWarningShadowedRule: an earlier rule whose traffic a later rule
// matches entirely is reported; partial overlaps are not.
func TestWarningShadowedRule(t *testing.T) {
	cases := []struct {
		name, egress string
		shadowed     []string
	}{
		{"later any destination", "  - dscp: 1\n    classifier: { to: [ { ipBlock: { cidr: 10.0.0.0/8 } } ] }\n  - dscp: 2\n", []string{"spec.egress[0]"}},
		{"later wider CIDR", "  - dscp: 1\n    classifier: { to: [ { ipBlock: { cidr: 10.1.0.0/16 } } ], ports: [ { protocol: TCP, port: 80 } ] }\n" +
			"  - dscp: 2\n    classifier: { to: [ { ipBlock: { cidr: 10.0.0.0/8 } } ], ports: [ { protocol: TCP } ] }\n", []string{"spec.egress[0]"}},
		{"earlier any, later narrower", "  - dscp: 1\n  - dscp: 2\n    classifier: { to: [ { ipBlock: { cidr: 10.0.0.0/8 } } ] }\n", nil},
		{"later has ports", "  - dscp: 1\n    classifier: { to: [ { ipBlock: { cidr: 10.1.0.0/16 } } ] }\n" +
			"  - dscp: 2\n    classifier: { to: [ { ipBlock: { cidr: 10.0.0.0/8 } } ], ports: [ { protocol: TCP } ] }\n", nil},
		{"later except inside", "  - dscp: 1\n    classifier: { to: [ { ipBlock: { cidr: 10.1.0.0/16 } } ] }\n" +
			"  - dscp: 2\n    classifier: { to: [ { ipBlock: { cidr: 10.0.0.0/8, except: [ 10.1.2.0/24 ] } } ] }\n", nil},
		{"other family", "  - dscp: 1\n    classifier: { to: [ { ipBlock: { cidr: fd00::/64 } } ] }\n" +
			"  - dscp: 2\n    classifier: { to: [ { ipBlock: { cidr: 0.0.0.0/0 } } ] }\n", nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var got []string
			for _, w := range warningsOf(compileEgress(t, c.egress), WarningShadowedRule) {
				got = append(got, w.Field)
			}
			if strings.Join(got, ",") != strings.Join(c.shadowed, ",") {
				t.Fatalf("shadowed rules %v, want %v", got, c.shadowed)
			}
		})
	}
}

// TestWarningSharedCap: a rate over several source pods on one node is
// one shared cap there; one pod per node is not reported, nor is a rule
// without a rate.
func TestWarningSharedCap(t *testing.T) {
	prod, in := story1Production(t, "")
	if ws := warningsOf(CompileObject(prod, NewSnapshot(in), ""), WarningSharedCap); len(ws) != 0 {
		t.Fatalf("one pod per node: %+v", ws)
	}
	in = withTwin(in)
	ws := warningsOf(CompileObject(prod, NewSnapshot(in), ""), WarningSharedCap)
	if len(ws) != 1 || ws[0].Field != "spec.egress[1].bandwidth.rate" ||
		!strings.Contains(ws[0].Message, "2 pods on node node-a (virt-launcher-db-1, virt-launcher-db-3)") {
		t.Fatalf("shared-cap warnings = %+v", ws)
	}
	if ws := warningsOf(CompileObject(prod, NewSnapshot(in), "node-b"), WarningSharedCap); len(ws) != 0 {
		t.Fatalf("node-b's controller warned about node-a's pods: %+v", ws)
	}
}

// TestRefusedInputs: burst without rate and IPv4-mapped IPv6 CIDRs are
// Accepted=False/InvalidSpec naming the field, with no rows.
func TestRefusedInputs(t *testing.T) {
	for _, c := range []struct{ name, egress, field string }{
		{"burst without rate", "  - dscp: 1\n    bandwidth: { burst: 100 }\n", "spec.egress[0].bandwidth.burst"},
		{"mapped cidr", "  - dscp: 1\n    classifier: { to: [ { ipBlock: { cidr: '::ffff:10.0.0.0/104' } } ] }\n", "spec.egress[0].classifier.to[0].ipBlock.cidr"},
		{"mapped except", "  - dscp: 1\n    classifier: { to: [ { ipBlock: { cidr: '::/0', except: [ '::ffff:10.0.0.0/104' ] } } ] }\n",
			"spec.egress[0].classifier.to[0].ipBlock.except[0]"},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := compileEgress(t, c.egress)
			if r.Err == nil || r.Accepted.Status != "False" || r.Accepted.Reason != ReasonInvalidSpec || !strings.Contains(r.Accepted.Message, c.field) {
				t.Fatalf("Accepted = %+v, err %v; want False/InvalidSpec naming %s", r.Accepted, r.Err, c.field)
			}
			if len(r.QoS)+len(r.PortGroups) != 0 {
				t.Fatalf("rows for a refused object: %+v", r)
			}
		})
	}
	if r := compileEgress(t, "  - dscp: 1\n    bandwidth: { rate: 100, burst: 100 }\n"); r.Err != nil {
		t.Fatalf("rate with burst refused: %v", r.Err)
	}
}
