package qos

import (
	"hash/fnv"
	"strconv"
	"strings"

	"github.com/nqos/nqos/internal/seeded"
)

// Switch name suffixes of the single-switch topologies.
const (
	localnetSwitchSuffix = "ovn_localnet_switch"
	layer2SwitchSuffix   = "ovn_layer2_switch"
)

// Topologies the compiler knows.
const (
	TopologyLocalnet = "localnet"
	TopologyLayer2   = "layer2"
	TopologyLayer3   = "layer3"
)

// Controller-name suffixes in k8s.ovn.org/owner-controller: nqos's own,
// and OVN-Kubernetes's (which earlier nqos versions also wrote). Neither
// is a suffix of the other, so no network name makes them meet.
const (
	NQOSControllerSuffix    = "-nqos-controller"
	OVNKubeControllerSuffix = "-network-controller"
)

// ControllerName is nqos's controller name on a network,
// "<network>-nqos-controller": the owner-controller of every row nqos
// writes and the first field of their k8s.ovn.org/id (so of the hashed
// port-group and address-set names). OVN-Kubernetes's own controllers
// are "<network>-network-controller", so neither side's ids, names or
// ownership predicates can match the other's rows.
func ControllerName(network string) string { return network + NQOSControllerSuffix }

// OVNKubeControllerName is OVN-Kubernetes's controller name of a
// user-defined network, "<network>-network-controller"; nqos versions
// before its own key wrote it too.
func OVNKubeControllerName(network string) string { return network + OVNKubeControllerSuffix }

// networkPrefix is upstream's user-defined network prefix: the name with
// '-' and '/' replaced by '.', plus '_'.
func networkPrefix(name string) string {
	return strings.NewReplacer("-", ".", "/", ".").Replace(name) + "_"
}

// SwitchName is the logical switch of a single-switch network:
// "<prefix>ovn_localnet_switch" or "<prefix>ovn_layer2_switch". It returns
// "" for topologies without a single switch.
func SwitchName(network, topology string) string {
	switch topology {
	case TopologyLocalnet:
		return networkPrefix(network) + localnetSwitchSuffix
	case TopologyLayer2:
		return networkPrefix(network) + layer2SwitchSuffix
	}
	return ""
}

// LogicalPortName is the LSP of a pod attached through a NAD:
// "<nadNs>.<nadName with - and / as .>_<podNs>_<podName>".
func LogicalPortName(nadNamespace, nadName, podNamespace, podName string) string {
	return networkPrefix(nadNamespace+"/"+nadName) + podNamespace + "_" + podName
}

// PodOfPort is the pod namespace and name a LogicalPortName encodes: the
// NAD prefix holds no '_' (it is built from DNS names with '-' and '/'
// turned into '.'), nor do pod namespaces and names, so the name splits
// into exactly three parts on '_'.
func PodOfPort(lsp string) (namespace, name string, ok bool) {
	parts := strings.Split(lsp, "_")
	if len(parts) != 3 || parts[0] == "" || parts[1] == "" || parts[2] == "" {
		return "", "", false
	}
	return parts[1], parts[2], true
}

// hashForOVN is upstream's HashForOVN: "a" + decimal FNV-64a of s.
func hashForOVN(s string) string {
	h := fnv.New64a()
	_, _ = h.Write([]byte(s))
	return "a" + strconv.FormatUint(h.Sum64(), 10)
}

// objectID is upstream's primary id "<controller>:NetworkQoS:<ns>:<name>".
func objectID(controller, namespace, name string) string {
	return controller + ":" + OwnerType + ":" + namespace + ":" + name
}

// PortGroupName is the source port group of a NetworkQoS on a network:
// "a" + decimal FNV-64a of "<controller>:NetworkQoS:<ns>:<name>".
func PortGroupName(controller, namespace, name string) string {
	return hashForOVN(objectID(controller, namespace, name))
}

// ownerIDs are the external_ids every row of one object on one network
// carries; id is the row's primary id.
func ownerIDs(net, namespace, name, id string) map[string]string {
	return map[string]string{
		OwnerControllerKey: ControllerName(net),
		OwnerTypeKey:       OwnerType,
		ObjectNameKey:      namespace + ":" + name,
		PrimaryIDKey:       id,
		NetworkKey:         net,
	}
}

// portGroupIDs are the external_ids of a source port group.
func portGroupIDs(net, namespace, name string) map[string]string {
	return ownerIDs(net, namespace, name, objectID(ControllerName(net), namespace, name))
}

// qosIDs are the external_ids of the QoS row of rule i.
func qosIDs(net, namespace, name string, rule int) map[string]string {
	r := strconv.Itoa(rule)
	ids := ownerIDs(net, namespace, name, objectID(ControllerName(net), namespace, name)+":"+r)
	ids[RuleIndexKey] = r
	return ids
}

// qosPortIDs are the external_ids of rule i's row for one port: the
// rule's id with ":<port>" appended, and the port under PortKey.
func qosPortIDs(net, namespace, name string, rule int, port string) map[string]string {
	ids := qosIDs(net, namespace, name, rule)
	ids[PrimaryIDKey] += ":" + port
	ids[PortKey] = port
	return ids
}

// addressSetIDs are the external_ids of the destination address set of
// rule i, destination d, family ("v4"/"v6"), as upstream's
// AddressSetNetworkQoS type (name, rule-index, ip-block-index, ip-family).
func addressSetIDs(net, namespace, name string, rule, dest int, family string) map[string]string {
	return setIDs(net, namespace, name, strconv.Itoa(rule), strconv.Itoa(dest), family)
}

// setIDs are the external_ids of an address set with upstream's string
// rule and ip-block indexes ("src", "0" for a source set).
func setIDs(net, namespace, name, r, d, family string) map[string]string {
	id := objectID(ControllerName(net), namespace, name) + ":" + r + ":" + d + ":" + family
	ids := ownerIDs(net, namespace, name, id)
	ids[RuleIndexKey] = r
	ids[IPBlockIndexKey] = d
	ids[IPFamilyKey] = family
	return ids
}

// qosPriority is upstream's formula: 10000 + priority*10 + ruleIndex.
func qosPriority(priority, rule int) int {
	if seeded.Active == seeded.PriorityX20 {
		return 10000 + priority*20 + rule
	}
	return 10000 + priority*10 + rule
}
