package audit

import (
	"slices"
	"strings"

	"github.com/nqos/nqos/internal/qos"
)

// Zone is one Northbound's share of a cluster.
type Zone struct {
	// Name is the zone: a node's name (one NB per node, interconnect) or
	// "global" (one central NB).
	Name string
	// Node restricts port-group members to the pods on it; "" for a
	// central NB (every node).
	Node string
}

// GlobalZone is the zone of one central Northbound.
const GlobalZone = "global"

// ZoneOf is the zone of a Northbound serving node ("" for a central NB),
// as the controller names it.
func ZoneOf(node string) Zone {
	if node == "" || node == GlobalZone {
		return Zone{Name: GlobalZone}
	}
	return Zone{Name: node, Node: node}
}

// Readiness condition type prefixes that say an object's rows are
// applied in a zone: nqos's own, and OVN-Kubernetes's (which nqos writes
// when OVN-Kubernetes's NetworkQoS is off).
const (
	NQOSReadyPrefix = "NQOSReady-In-Zone-"
	ReadyPrefix     = qos.ReadyConditionPrefix
)

// Expect compiles in for zone as its controller does (scope: which
// networks nqos writes rows for) and reads from status (conditions by
// "ns/name") which objects say their rows are applied in the zone.
// Rejected and invalid objects expect no rows.
func Expect(in qos.Input, zone Zone, scope qos.Scope, status map[string][]qos.Condition) Expected {
	rs := qos.CompileObjectsWith(in.NetworkQoSes, qos.NewSnapshot(in), qos.Options{Node: zone.Node, Scope: scope})
	var accepted []qos.Result
	var objs []Object
	for _, r := range rs {
		o := Object{Key: r.Key(), Accepted: r.Err == nil && r.Accepted.Status == "True",
			AppliedCondition: appliedCondition(status[r.Key()], zone.Name)}
		if o.Accepted {
			accepted = append(accepted, r)
		}
		objs = append(objs, o)
	}
	slices.SortFunc(objs, func(a, b Object) int { return strings.Compare(a.Key, b.Key) })
	return Expected{Rows: qos.Assemble(accepted), Objects: objs, pod: podLookup(in.Pods)}
}

// appliedCondition is the first True readiness condition of the zone.
func appliedCondition(conds []qos.Condition, zone string) string {
	for _, t := range []string{NQOSReadyPrefix + zone, ReadyPrefix + zone} {
		for _, c := range conds {
			if c.Type == t && c.Status == "True" {
				return t
			}
		}
	}
	return ""
}
