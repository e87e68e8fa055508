package intent

import (
	"net/netip"

	corev1 "k8s.io/api/core/v1"
)

// Trimmed is an object as read from an API server cut down to what the
// decoders read: apiVersion, kind, the metadata's name, namespace and
// labels, spec.
func Trimmed(raw map[string]any) map[string]any { return trimmed(raw) }

// PodNetworkAddrs are the addresses ovnkube's pod-networks annotation
// gives the pod on NAD "ns/name" (networks with IPAM only).
func PodNetworkAddrs(pod *corev1.Pod, nad string) []netip.Prefix { return podNetworkAddrs(pod, nad) }
