package qos

import corev1 "k8s.io/api/core/v1"

// Departed reports whether the pod logical switch port lsp was created
// for is gone or terminating, as pod (namespace, name) finds it. Such a
// port keeps its QoS (port-group membership, per-port rows) while its
// LSP exists: the guest behind it may still send (a launcher pod
// replaced while the VM runs, a pod in its grace period), and ovnkube
// deletes the LSP, which ends the membership in the same NB transaction.
// A port whose pod is there and no longer selected leaves at once. A name
// that encodes no pod, or a failed read, never departs.
func Departed(lsp string, pod func(namespace, name string) (*corev1.Pod, bool, error)) bool {
	ns, name, ok := PodOfPort(lsp)
	if !ok {
		return false
	}
	p, found, err := pod(ns, name)
	switch {
	case err != nil:
		return false
	case !found:
		return true
	}
	return p.DeletionTimestamp != nil
}

// BridgeRows are the bridging rows (BridgeRow) of the port-group rows of
// rows for the ports joining their group: joining maps a port group to
// its wanted ports that are not members, and bridged says whether such a
// port gets (or keeps) its bridge. In the order of rows, then of joining.
func BridgeRows(rows []QoSRow, joining map[string][]string, bridged func(b QoSRow) bool) []QoSRow {
	var out []QoSRow
	for _, r := range rows {
		pg := SourceGroup(r)
		if pg == "" {
			continue
		}
		for _, port := range joining[pg] {
			if b := BridgeRow(r, port); bridged(b) {
				out = append(out, b)
			}
		}
	}
	return out
}
