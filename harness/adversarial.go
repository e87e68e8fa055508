package harness

import (
	"github.com/nqos/nqos/harness/verdict"
	"slices"
	"time"

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

// BaselineResult is OVN's own port-group change time, per sample:
// pg-set-ports to the first marked packet (Add) and clearing the group
// to the first unmarked one (Remove).
type BaselineResult struct {
	Add, Remove []time.Duration
	Detail      any
}

// Appearance is what StartVMProbed measured; durations count from
// Origin (zero: not seen): the LSP's creation where the harness creates
// it under the probe, or the probe's start where ovnkube had created the
// LSP with the launcher pod, LSPBefore earlier (the port then binds under
// the probe).
type Appearance struct {
	LSP                                       string
	Origin                                    string
	LSPBefore                                 time.Duration
	PortUp, InGroup, FirstPacket, FirstMarked time.Duration
	// Packets are the probe packets seen on the uplink, Unmarked those
	// without the object's DSCP.
	Packets, Unmarked int
	Detail            any
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
	baseline *BaselineResult // the last ovnBaseline step's
}
