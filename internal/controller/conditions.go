package controller

import "github.com/nqos/nqos/internal/qos"

// Condition types and aggregate texts nqos writes on a NetworkQoS, and
// which of them it owns. One writer per condition:
//
//   - Accepted is nqos's (the OKEP-6815 condition): every nqos zone
//     controller writes the same verdict, computed from the spec and the
//     selected networks.
//   - NQOSReady-In-Zone-<zone> is nqos's own per-zone readiness ("global"
//     for the central controller). No OVN-Kubernetes version writes or
//     aggregates a type with this prefix (ovnkube's cluster manager
//     collects the types starting with "Ready-In-Zone-"), so it never
//     flips under two field managers.
//   - Ready-In-Zone-<zone> and status.status are ovnkube's while its own
//     NetworkQoS controller runs (its zone controllers and its cluster
//     manager write them); nqos writes them only when configured with
//     ovnkube's NetworkQoS off, and then it writes Ready-In-Zone-<zone>
//     with the same status, reason and message as NQOSReady-In-Zone-<zone>,
//     and status.status aggregated from its zones (StatusApplied or
//     StatusNotApplied).
const (
	ConditionAccepted = qos.ConditionAccepted
	// ConditionNQOSReadyPrefix + zone is nqos's own readiness condition.
	ConditionNQOSReadyPrefix = "NQOSReady-In-Zone-"
	// ConditionOVNKReadyPrefix + zone is ovnkube's per-zone condition.
	ConditionOVNKReadyPrefix = qos.ReadyConditionPrefix

	// StatusApplied and StatusNotApplied are the status.status texts
	// (ovnkube's cluster-manager wording, so `kubectl get networkqos`
	// reads the same whoever aggregates).
	StatusApplied    = "NetworkQoS Destinations applied"
	StatusNotApplied = "NetworkQoS Destinations not correctly applied"
)

// NQOSReadyType is nqos's readiness condition type of a zone.
func NQOSReadyType(zone string) string { return ConditionNQOSReadyPrefix + zone }

// OVNKReadyType is ovnkube's readiness condition type of a zone.
func OVNKReadyType(zone string) string { return ConditionOVNKReadyPrefix + zone }

// compileOptions are the compiler options of this controller: its node,
// and its scope (networks without discoverable pod IPs only while
// OVN-Kubernetes's NetworkQoS runs).
func (c *Controller) compileOptions() qos.Options {
	o := qos.Options{Node: c.node, Scope: qos.ScopeAllNetworks}
	if c.ovnkube {
		o.Scope = qos.ScopeIPAMLess
	}
	return o
}
