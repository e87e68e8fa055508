package harness

import (
	"github.com/nqos/nqos/harness/verdict"
	"slices"
	"time"

	"github.com/nqos/nqos/internal/qos"
)

// Spoof flow names (package harness/localnetenv sends the flows under them).
const (
	SpoofOwn       = "spoofer-own"
	SpoofForgedIP  = "spoofer-victim-ip"
	SpoofForgedMAC = "spoofer-victim-mac"
	SpoofControl   = "victim-own"
)

// SpoofFlow is what the uplinks saw of one spoof flow.
type SpoofFlow struct {
	Name                       string
	Sent, Seen                 uint64
	DSCP                       map[int]uint64
	OfferedKbps, DeliveredKbps float64
}

// SpoofResult is what a spoof step measured.
type SpoofResult struct {
	Flows    []SpoofFlow
	Verdicts []verdict.Verdict
	Detail   any
}

// Flow returns the named flow (zero when absent).
func (r SpoofResult) Flow(name string) SpoofFlow {
	i := slices.IndexFunc(r.Flows, func(f SpoofFlow) bool { return f.Name == name })
	if i < 0 {
		return SpoofFlow{Name: name}
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
