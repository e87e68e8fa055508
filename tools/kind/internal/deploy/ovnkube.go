package deploy

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Where nqos-kind up and nqos-kind ovnkube record whether the cluster's
// ovnkube runs its own NetworkQoS controller (cluster.NetworkQoSKey).
const (
	kindConfigMap     = "nqos-kind"
	kindConfigMapNS   = "kube-system"
	kindNetworkQoSKey = "networkqos"
)

// ovnkubeNetworkQoS reads the cluster's ovnkube NetworkQoS setting: "on"
// is true; "off", no key or no ConfigMap (a cluster without ovnkube, or
// made before the key existed: ovnkube then runs without it) is false;
// any other value, or a failed read, is an error.
func (t *target) ovnkubeNetworkQoS(ctx context.Context) (bool, error) {
	cm, err := t.kube.cs.CoreV1().ConfigMaps(kindConfigMapNS).Get(ctx, kindConfigMap, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("ConfigMap %s/%s: %w", kindConfigMapNS, kindConfigMap, err)
	}
	switch v := cm.Data[kindNetworkQoSKey]; v {
	case "on":
		return true, nil
	case "off", "":
		return false, nil
	default:
		return false, fmt.Errorf("ConfigMap %s/%s: %s %q: want on or off", kindConfigMapNS, kindConfigMap, kindNetworkQoSKey, v)
	}
}
