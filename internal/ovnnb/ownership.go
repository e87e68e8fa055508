package ovnnb

import (
	"maps"
	"strings"

	"github.com/nqos/nqos/internal/qos"
)

// Owner classifies a row by its external_ids.
type Owner int

const (
	// OwnerOther is any row that is not a NetworkQoS row.
	OwnerOther Owner = iota
	// OwnerNQOS is a row carrying nqos's ownership key: owner-type
	// NetworkQoS, owner-controller "<network>-nqos-controller" for its
	// k8s.ovn.org/network, and a k8s.ovn.org/id starting with that
	// controller. Only these rows are nqos's to change or delete.
	OwnerNQOS
	// OwnerEarlierKey is a NetworkQoS row of a user-defined network under
	// OVN-Kubernetes's controller name "<network>-network-controller"
	// (not the default network's "default-network-controller"):
	// written by ovnkube's own NetworkQoS controller, or by an nqos
	// version before its own key (see AdoptEarlierRows).
	OwnerEarlierKey
	// OwnerForeignNetworkQoS is any other NetworkQoS row (ovnkube's
	// default network, another controller).
	OwnerForeignNetworkQoS
)

// ClassifyOwner tells whose a row is from its external_ids alone.
func ClassifyOwner(ext map[string]string) Owner {
	if ext[qos.OwnerTypeKey] != qos.OwnerType {
		return OwnerOther
	}
	net, ctrl := ext[qos.NetworkKey], ext[qos.OwnerControllerKey]
	switch {
	case net != "" && ctrl == qos.ControllerName(net) && strings.HasPrefix(ext[qos.PrimaryIDKey], ctrl+":"+qos.OwnerType+":"):
		return OwnerNQOS
	case earlierNetwork(ext) != "":
		return OwnerEarlierKey
	}
	return OwnerForeignNetworkQoS
}

// ovnkubeDefaultController is OVN-Kubernetes's default-network controller.
const ovnkubeDefaultController = "default" + qos.OVNKubeControllerSuffix

// earlierNetwork is the user-defined network of an earlier-key row: its
// k8s.ovn.org/network, or (OVN-Kubernetes's address sets carry none) the
// owner-controller without "-network-controller"; "" for any other row.
func earlierNetwork(ext map[string]string) string {
	ctrl := ext[qos.OwnerControllerKey]
	net, ok := strings.CutSuffix(ctrl, qos.OVNKubeControllerSuffix)
	if !ok || ctrl == ovnkubeDefaultController || net == "" {
		return ""
	}
	if n := ext[qos.NetworkKey]; n != "" && n != net {
		return ""
	}
	return net
}

// IsOwned reports whether external_ids carry nqos's ownership key.
func IsOwned(ext map[string]string) bool { return ClassifyOwner(ext) == OwnerNQOS }

// IsForeignNetworkQoS reports whether external_ids mark a NetworkQoS row
// nqos does not own (OVN-Kubernetes's own NetworkQoS rows among them).
func IsForeignNetworkQoS(ext map[string]string) bool {
	o := ClassifyOwner(ext)
	return o == OwnerEarlierKey || o == OwnerForeignNetworkQoS
}

// rekeyed is an earlier-key row's external_ids under nqos's key: the
// owner-controller and the k8s.ovn.org/id's controller field replaced,
// k8s.ovn.org/network set, everything else kept.
func rekeyed(ext map[string]string) map[string]string {
	net := earlierNetwork(ext)
	out := maps.Clone(ext)
	out[qos.OwnerControllerKey] = qos.ControllerName(net)
	out[qos.NetworkKey] = net
	if rest, ok := strings.CutPrefix(ext[qos.PrimaryIDKey], qos.OVNKubeControllerName(net)+":"); ok {
		out[qos.PrimaryIDKey] = qos.ControllerName(net) + ":" + rest
	}
	return out
}
