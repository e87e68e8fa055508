package harness

import (
	"testing"

	"github.com/nqos/nqos/internal/qos"
	"github.com/nqos/nqos/scenarios"
)

// TestRowDiffCanonicalMatch: a scenario match written as in the manifest
// (host prefix, set order) equals the compiler's spelling; a different
// address does not.
func TestRowDiffCanonicalMatch(t *testing.T) {
	row := qos.QoSRow{Direction: "to-lport", Priority: 10600, Match: "inport == @a1 && ip4.dst == {192.168.50.101, 192.168.50.102}", Action: qos.Action{DSCP: 46}}
	w := scenarios.QoSCheck{Priority: 10600, DSCP: 46, Match: "inport == @$pg && ip4.dst == {192.168.50.102/32, 192.168.50.101/32}"}
	if d := rowDiff(row, w, "a1"); d != "" {
		t.Fatalf("equivalent spelling: diff %q", d)
	}
	w.Match = "inport == @$pg && ip4.dst == {192.168.50.103/32, 192.168.50.101/32}"
	if d := rowDiff(row, w, "a1"); d == "" {
		t.Fatal("a different address compared equal")
	}
}
