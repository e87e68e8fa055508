package harness

import (
	"github.com/nqos/nqos/harness/lifeprobe"

	"github.com/nqos/nqos/internal/qos"
)

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
