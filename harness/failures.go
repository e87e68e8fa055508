package harness

import (
	"slices"

	"github.com/nqos/nqos/harness/results"
	"github.com/nqos/nqos/harness/verdict"
)

// failedProperties lists, sorted and unique, every property the scenario
// failed: the failing step's, nb-audit for invariant sightings, each
// failed flow verdict's property (three-way among them).
func failedProperties(res *results.Scenario, f *verdict.Failure) []verdict.Property {
	var out []verdict.Property
	if f != nil {
		out = append(out, f.Properties...)
	}
	if len(res.Violations) > 0 {
		out = append(out, verdict.Audit)
	}
	for _, fl := range res.Flows {
		for _, v := range fl.Verdicts {
			if !v.Pass {
				out = append(out, v.Property)
			}
		}
	}
	for i, p := range out {
		out[i] = p.Normal()
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
		out = append(out, verdict.FailureLine(s.Name, p))
	}
	return out
}
