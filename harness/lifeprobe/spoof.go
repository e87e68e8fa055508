package lifeprobe

import (
	"slices"

	"github.com/nqos/nqos/harness/verdict"
)

// SpoofedFlow is what one injected flow of a spoof step became on the
// uplink.
type SpoofedFlow struct {
	Name   string `json:"name"`
	From   VM     `json:"from"`
	Node   string `json:"node"`
	SrcIP  string `json:"srcIP"`
	SrcMAC string `json:"srcMAC"`
	Sent   uint64 `json:"sent"`
	Seen   uint64 `json:"seen"`
	// Dropped = Sent - Seen: by port security or by the meter.
	Dropped uint64 `json:"dropped"`
	// MisClassified counts packets carrying the victim's DSCP.
	MisClassified uint64         `json:"misClassified"`
	DSCP          map[int]uint64 `json:"dscp"`
	OfferedKbps   float64        `json:"offeredKbps"`
	DeliveredKbps float64        `json:"deliveredKbps"`
}

// Spoofing is what a spoof step measured, with capture's standard
// verdicts for the flows that reached the uplink (DSCP, token-bucket
// bound, throughput floor) and the port-security verdict.
type Spoofing struct {
	Flows    []SpoofedFlow     `json:"flows"`
	Verdicts []verdict.Verdict `json:"verdicts"`
	Pcaps    []string          `json:"pcaps"`
}

// Find returns the named flow's result.
func (r Spoofing) Find(name string) (SpoofedFlow, bool) {
	i := slices.IndexFunc(r.Flows, func(f SpoofedFlow) bool { return f.Name == name })
	if i < 0 {
		return SpoofedFlow{}, false
	}
	return r.Flows[i], true
}

// Flow returns the named flow as package verdict judges it (zero but
// for its name when absent).
func (r Spoofing) Flow(name string) verdict.SpoofFlow {
	f, ok := r.Find(name)
	if !ok {
		return verdict.SpoofFlow{Name: name}
	}
	return verdict.SpoofFlow{Name: f.Name, Sent: f.Sent, Seen: f.Seen, DSCP: f.DSCP,
		OfferedKbps: f.OfferedKbps, DeliveredKbps: f.DeliveredKbps}
}
