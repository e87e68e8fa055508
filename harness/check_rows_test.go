package harness

import (
	"strings"
	"testing"

	"github.com/nqos/nqos/internal/qos"
	"github.com/nqos/nqos/scenarios"
)

// TestRowsIncludeIsASubset: qos (exact) reports a row nobody expected,
// rowsInclude (a subset) does not, and both report a missing row.
func TestRowsIncludeIsASubset(t *testing.T) {
	row := func(rule string, prio, dscp int) qos.QoSRow {
		return qos.QoSRow{Direction: qos.DirectionToLport, Priority: prio, Match: "inport == @pg1 && (ip4 || ip6)",
			Action: qos.Action{DSCP: dscp}, ExternalIDs: map[string]string{qos.RuleIndexKey: rule, qos.NetworkKey: "blue"}}
	}
	got := qos.Desired{QoS: []qos.QoSRow{row("0", 10500, 46), row("1", 10501, 8)},
		PortGroups: []qos.PortGroup{{Name: "pg1", ExternalIDs: map[string]string{qos.NetworkKey: "blue"}}}}
	want := []scenarios.QoSCheck{{Rule: 0, Network: "blue", Match: "inport == @$pg && (ip4 || ip6)", Priority: 10500, DSCP: 46}}
	if m := qosMismatches(got, want, true); len(m) != 1 || !strings.Contains(m[0], "unexpected QoS row rule-index=1") {
		t.Errorf("exact: %v, want the unexpected rule 1", m)
	}
	if m := qosMismatches(got, want, false); len(m) != 0 {
		t.Errorf("subset: %v, want none", m)
	}
	missing := append(want, scenarios.QoSCheck{Rule: 2, Network: "blue", Match: "x"})
	if m := qosMismatches(got, missing, false); len(m) != 1 || !strings.Contains(m[0], "no QoS row for rule 2") {
		t.Errorf("subset with a missing row: %v", m)
	}
}
