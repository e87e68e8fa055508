package lifeprobe

import (
	"time"

	"github.com/nqos/nqos/harness/marks"
)

// VM names a VM of the testbed.
type VM struct {
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
}

func (r VM) String() string { return r.Namespace + "/" + r.Name }

// The origins of an Appearance's durations.
const (
	OriginLSPCreated = "LSP created"
	OriginProbeStart = "probe start"
)

// Appearance is what a VM's start under a probe measured (a probed
// startVM step). Durations count from CommandAt: the ovn-nbctl command
// that created the LSP, or, where ovnkube created it with the launcher
// pod (LSPInNB negative), the probe's start.
type Appearance struct {
	VM        VM        `json:"vm"`
	LSP       string    `json:"lsp"`
	Node      string    `json:"node"`
	CommandAt time.Time `json:"commandAt"`
	// LSPInNB: the LSP appeared in the NB (monitor of the harness).
	LSPInNB time.Duration `json:"lspInNBNs"`
	// InGroup: the controller put the LSP into the object's port group.
	InGroup time.Duration `json:"inGroupNs"`
	// PortUp: kubevirt saw the LSP bound and up.
	PortUp time.Duration `json:"portUpNs"`
	// FirstPacket: first packet of the VM on the uplink, any DSCP.
	FirstPacket time.Duration `json:"firstPacketNs"`
	// FirstMarked: first packet carrying DSCP on the uplink.
	FirstMarked time.Duration `json:"firstMarkedNs"`
	// Marking counts every packet of the VM to the peer on the uplink
	// from CommandAt until the probe stopped; Marking.Unmarked are the
	// packets that left before marking started.
	Marking marks.Count `json:"marking"`
	Out     Direction   `json:"out"`
}

// Origin is what the durations count from: the LSP's creation, or the
// probe's start where the LSP existed before it.
func (a Appearance) Origin() string {
	if a.LSPInNB < 0 {
		return OriginProbeStart
	}
	return OriginLSPCreated
}

// LSPBefore is how long before the probe's start the LSP existed (0:
// the harness created it under the probe).
func (a Appearance) LSPBefore() time.Duration { return max(-a.LSPInNB, 0) }

// Baseline is OVN's own port-group change time (an ovnBaseline step):
// the VM's port put into a scratch port group with a QoS row of its own
// and out again, per sample.
type Baseline struct {
	VM        VM     `json:"vm"`
	LSP       string `json:"lsp"`
	PortGroup string `json:"portGroup"`
	// Add: `ovn-nbctl pg-set-ports` command -> first marked packet.
	Add Spread `json:"add"`
	// Remove: port-group clear command -> first unmarked packet.
	Remove Spread    `json:"remove"`
	Out    Direction `json:"out"`
}
