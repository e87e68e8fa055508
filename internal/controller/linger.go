package controller

import (
	corev1 "k8s.io/api/core/v1"

	"github.com/nqos/nqos/internal/qos"
)

// departed reports whether the pod a logical switch port was created for
// is gone from the informers or terminating. Such a port keeps its QoS
// (port-group membership, per-port rows) while its LSP exists: the guest
// behind it may still send (a launcher pod replaced while the VM runs, a
// pod in its grace period), and ovnkube deletes the LSP, which ends the
// membership in the same NB transaction. A port whose pod is there and no
// longer selected leaves at once. A name that encodes no pod, or a failed
// read, never lingers.
func (c *Controller) departed(lsp string) bool {
	ns, name, ok := qos.PodOfPort(lsp)
	if !ok {
		return false
	}
	objs, err := c.inf.podsInNamespace(ns)
	if err != nil {
		return false
	}
	for _, o := range objs {
		if p, ok := o.(*corev1.Pod); ok && p.Name == name {
			return p.DeletionTimestamp != nil
		}
	}
	return true
}
