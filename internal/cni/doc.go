// Package cni owns nqos-cni, a chained CNI plugin (spec 1.0.0) that plugs
// a pod's OVN-Kubernetes localnet secondary interfaces into OVS br-int the
// way ovnkube's CNI would: ADD reads the pod's k8s.v1.cni.cncf.io/networks
// annotation and each named NetworkAttachmentDefinition from the API,
// creates one veth per entry (the pod end named, addressed and sized as
// the entry and the NAD say, without IP; the node end on br-int with
// external_ids:iface-id set to the logical port ovnkube names for the pod
// on that network, plus nqos-cni/* keys naming the sandbox), passes the
// previous result through with the new interfaces added, and undoes
// everything it made when any step fails. DEL removes every port of the
// sandbox; CHECK verifies they are in place. It owns the parsing of the
// annotation and of localnet NAD configs, the names of the node ends and
// the generated MACs.
package cni
