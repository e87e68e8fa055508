package harness

import (
	"context"
	"github.com/nqos/nqos/harness/verdict"
	"slices"
	"time"

	"github.com/nqos/nqos/internal/qos"
	"github.com/nqos/nqos/scenarios"
)

// Adversary is the environment side of the spoof, churn and ovnBaseline
// steps and of a startVM step under a probe.
type Adversary interface {
	// Spoof runs a spoof step's four raw-frame flows (the spoofer's own
	// frames, with the other VM's IP, with its IP and MAC, the other VM's
	// own frames) and returns what the uplink captures saw of each, with
	// the capture's verdicts (DSCP, token-bucket bound, floor).
	Spoof(ctx context.Context, sp *scenarios.Spoof) (SpoofResult, error)
	// PortGroupBaseline times OVN's own port-group change: the VM's
	// bound port added to a harness-owned port group with a QoS row of
	// its own, to the first marked probe packet on the uplink.
	PortGroupBaseline(ctx context.Context, vm *scenarios.VM, b *scenarios.OVNBaseline) (BaselineResult, error)
	// StartVMProbed starts a late VM like StartVM + CreatePort, but with
	// the guest's probe to p.Peer running before the LSP is created, and
	// times the LSP's creation to its port being up, in the object's
	// port group, and to the first (marked) probe packet on the uplink.
	StartVMProbed(ctx context.Context, vm *scenarios.VM, p *scenarios.Probe) (Appearance, error)
	// AcceptedStatus reads a NetworkQoS's generation and its Accepted
	// condition with the generation it was written for, in one read.
	AcceptedStatus(ctx context.Context, namespace, name string) (ObjectStatus, error)
	// WatchRejected is Watch whose rejected set is asked anew for every
	// audited NB state (objects rejected right now own no row).
	WatchRejected(ctx context.Context, rejected func(ObjectKey) bool) (Watch, error)
}

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
