package harness

import (
	"fmt"
	"slices"
	"strings"

	"github.com/nqos/nqos/harness/results"
)

// Properties a scenario can fail on, beyond the capture's verdict checks
// (dscp, unmarked, policing-bound, policing-floor, meter-accounting,
// throughput, traffic). They appear in the machine-readable line
// "FAIL scenario <name>: <property>" and never contain spaces.
const (
	PropConditions = "conditions"  // a status condition expectation
	PropRows       = "nb-rows"     // an NB row expectation (rows, members, no owned rows)
	PropAudit      = "nb-audit"    // an NB invariant broken in some committed state
	PropThreeWay   = "three-way"   // intent, ovn-trace and capture disagree
	PropUnmarked   = "unmarked"    // a lifecycle probe saw packets without the object's DSCP
	PropLoss       = "loss"        // a lifecycle probe lost more datagrams than allowed
	PropGap        = "marking-gap" // a daemon restart left the probe unmarked for too long
)

// mismatch is one way an expectation does not hold.
type mismatch struct{ prop, text string }

// mismatches are the mismatches of one check; none means it holds.
type mismatches []mismatch

func (m *mismatches) add(prop string, texts ...string) {
	for _, t := range texts {
		*m = append(*m, mismatch{prop: prop, text: t})
	}
}

func (m mismatches) String() string {
	texts := make([]string, len(m))
	for i, x := range m {
		texts[i] = x.text
	}
	return strings.Join(texts, "; ")
}

// failure turns the mismatches into the step's error.
func (m mismatches) failure(prefix string) *checkFailure {
	cf := &checkFailure{msg: prefix + m.String()}
	for _, x := range m {
		cf.props = append(cf.props, x.prop)
	}
	return cf
}

// checkFailure is an expectation that did not hold (as opposed to an
// environment error); props are the properties it is about.
type checkFailure struct {
	msg   string
	props []string
}

func (c *checkFailure) Error() string { return c.msg }

// failedProperties lists, sorted and unique, every property the scenario
// failed: the failing step's, nb-audit for invariant sightings, each
// failed flow verdict's check (three-way among them).
func failedProperties(res *results.Scenario, cf *checkFailure) []string {
	var out []string
	if cf != nil {
		out = append(out, cf.props...)
	}
	if len(res.Violations) > 0 {
		out = append(out, PropAudit)
	}
	for _, f := range res.Flows {
		for _, v := range f.Verdicts {
			if !v.Pass {
				out = append(out, v.Check)
			}
		}
	}
	for i, p := range out {
		out[i] = strings.Join(strings.Fields(p), "-")
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// FailureLines are the machine-readable lines of a scenario result, one
// per failed property: "FAIL scenario <name>: <property>". hack/mutation.sh
// (through internal/seeded/testlog) reads them.
func FailureLines(s results.Scenario) []string {
	var out []string
	for _, p := range s.FailedProperties {
		out = append(out, fmt.Sprintf("FAIL scenario %s: %s", s.Name, p))
	}
	return out
}
