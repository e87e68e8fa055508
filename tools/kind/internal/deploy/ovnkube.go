package deploy

import (
	"context"
	"fmt"
	"slices"
	"strings"

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
	v, err := t.kindChoice(ctx, kindNetworkQoSKey, "off", "on", "off")
	return v == "on", err
}

// kindSetting reads key of the cluster's nqos-kind ConfigMap: "" when the
// ConfigMap or the key is missing; a failed read is an error.
func (t *target) kindSetting(ctx context.Context, key string) (string, error) {
	cm, err := t.kube.cs.CoreV1().ConfigMaps(kindConfigMapNS).Get(ctx, kindConfigMap, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("ConfigMap %s/%s: %w", kindConfigMapNS, kindConfigMap, err)
	}
	return cm.Data[key], nil
}

// kindChoice reads key of the nqos-kind ConfigMap as kindSetting does,
// "" being dflt; a value other than those of want is an error.
func (t *target) kindChoice(ctx context.Context, key, dflt string, want ...string) (string, error) {
	v, err := t.kindSetting(ctx, key)
	switch {
	case err != nil:
		return "", err
	case v == "":
		return dflt, nil
	case !slices.Contains(want, v):
		return "", fmt.Errorf("ConfigMap %s/%s: %s %q: want %s", kindConfigMapNS, kindConfigMap, key, v, strings.Join(want, " or "))
	}
	return v, nil
}
