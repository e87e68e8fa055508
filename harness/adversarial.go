package harness

import (
	"github.com/nqos/nqos/harness/lifeprobe"
	"github.com/nqos/nqos/harness/verdict"
	"slices"

	"github.com/nqos/nqos/internal/qos"
)

// SpoofResult is what a spoof step measured.
type SpoofResult struct {
	Flows    []verdict.SpoofFlow
	Verdicts []verdict.Verdict
	Detail   any
}

// Flow returns the named flow (zero when absent).
func (r SpoofResult) Flow(name string) verdict.SpoofFlow {
	i := slices.IndexFunc(r.Flows, func(f verdict.SpoofFlow) bool { return f.Name == name })
	if i < 0 {
		return verdict.SpoofFlow{Name: name}
	}
	return r.Flows[i]
}

// ObjectStatus is a NetworkQoS's generation and Accepted condition.
type ObjectStatus struct {
	Found bool
	// Generation is metadata.generation, Observed the Accepted
	// condition's observedGeneration.
	Generation, Observed int64
	Accepted             *qos.Condition
}

// advState is what the adversarial steps keep across steps.
type advState struct {
	baseline *lifeprobe.Baseline // the last ovnBaseline step's
}
