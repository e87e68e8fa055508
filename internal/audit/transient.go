package audit

import (
	"slices"

	corev1 "k8s.io/api/core/v1"

	"github.com/nqos/nqos/internal/qos"
)

// podLookup finds a pod of the cluster by namespace and name.
func podLookup(pods []*corev1.Pod) func(namespace, name string) (*corev1.Pod, bool, error) {
	byKey := make(map[[2]string]*corev1.Pod, len(pods))
	for _, p := range pods {
		byKey[[2]string{p.Namespace, p.Name}] = p
	}
	return func(namespace, name string) (*corev1.Pod, bool, error) {
		p, ok := byKey[[2]string{namespace, name}]
		return p, ok, nil
	}
}

// withTransient is want with what the controller holds between a pod's
// change and its LSP's, so that a clean zone in those states audits
// clean:
//   - a wanted port-group member whose LSP does not exist yet cannot be a
//     member (the reference is weak); it joins once its LSP appears, and
//     meanwhile its port-group rows have a bridging row naming the port
//     (qos.BridgeRows with the controller's rule: the LSP is missing, or
//     the bridge exists while the port joins);
//   - a port no longer wanted whose LSP exists and whose pod departed
//     (qos.Departed) keeps its membership and its per-port rows.
//
// Anything else stays drift.
func withTransient(want Expected, got Actual) Expected {
	lsp := make(map[string]bool, len(got.Ports))
	for _, p := range got.Ports {
		lsp[p] = true
	}
	have := map[string]qos.QoSRow{}
	for _, r := range got.Owned.QoS {
		have[qosKey(r)] = r
	}
	members := map[string][]string{}
	for _, pg := range got.Owned.PortGroups {
		members[pg.Name] = pg.Ports
	}
	departs := func(port string) bool {
		return port != "" && lsp[port] && want.pod != nil && qos.Departed(port, want.pod)
	}
	out := want
	out.Rows.PortGroups = make([]qos.PortGroup, len(want.Rows.PortGroups))
	joining := map[string][]string{}
	for i, pg := range want.Rows.PortGroups {
		pg.Ports = slices.DeleteFunc(slices.Clone(pg.Ports), func(p string) bool { return !lsp[p] })
		for _, p := range want.Rows.PortGroups[i].Ports {
			if !slices.Contains(members[pg.Name], p) {
				joining[pg.Name] = append(joining[pg.Name], p)
			}
		}
		for _, p := range members[pg.Name] {
			if !slices.Contains(pg.Ports, p) && departs(p) {
				pg.Ports = append(pg.Ports, p)
			}
		}
		out.Rows.PortGroups[i] = pg
	}
	bridges := qos.BridgeRows(want.Rows.QoS, joining, func(b qos.QoSRow) bool {
		_, exists := have[qosKey(b)]
		return !lsp[b.ExternalIDs[qos.PortKey]] || exists
	})
	out.Rows.QoS = append(slices.Clone(want.Rows.QoS), bridges...)
	wanted := map[string]bool{}
	for _, r := range out.Rows.QoS {
		wanted[qosKey(r)] = true
	}
	for _, r := range got.Owned.QoS {
		if !wanted[qosKey(r)] && departs(r.ExternalIDs[qos.PortKey]) && ownedByExpected(want, r) {
			out.Rows.QoS = append(out.Rows.QoS, r)
		}
	}
	return out
}

// ownedByExpected reports whether r is a row of an object the zone
// expects rows of (a departing port keeps only its own object's rows).
func ownedByExpected(want Expected, r qos.QoSRow) bool {
	obj := objectOf(r.ExternalIDs)
	return slices.ContainsFunc(want.Objects, func(o Object) bool { return o.Key == obj && o.Accepted })
}
