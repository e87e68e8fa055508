// Package localnet owns the embedded OVN localnet testbed: OVN central
// (NB and SB ovsdb-server, ovn-northd) in the root namespace, one network
// namespace per node holding its own ovsdb-server, ovs-vswitchd (userspace
// datapath) and ovn-controller, a VLAN-aware fabric switch joining the
// node uplinks (trunks) and external hosts (access ports; iperf3 servers,
// dnsmasq), localnet logical switches built from NAD or
// ClusterUserDefinedNetwork manifests, and optionally a real etcd +
// kube-apiserver. The fabric switch is an OVS bridge in its own namespace
// because this kernel has no bridge VLAN filtering, 8021q or tc
// classifiers. Every name carries the run ID so testbeds do not collide,
// and Down removes a run even after a crash by finding what it created
// from that ID.
package localnet
