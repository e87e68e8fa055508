package controller

import (
	corev1 "k8s.io/api/core/v1"

	"github.com/nqos/nqos/internal/qos"
)

// departed reports whether the pod a logical switch port was created for
// is gone from the informers or terminating (qos.Departed): such a port
// keeps its QoS while its LSP exists.
func (c *Controller) departed(lsp string) bool {
	return qos.Departed(lsp, c.cachedPod)
}

// cachedPod finds a pod in the informers' cache.
func (c *Controller) cachedPod(namespace, name string) (*corev1.Pod, bool, error) {
	objs, err := c.inf.podsInNamespace(namespace)
	if err != nil {
		return nil, false, err
	}
	for _, o := range objs {
		if p, ok := o.(*corev1.Pod); ok && p.Name == name {
			return p, true, nil
		}
	}
	return nil, false, nil
}
