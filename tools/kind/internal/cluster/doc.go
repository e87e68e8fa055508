// Package cluster creates, readies and deletes nqos KinD clusters through
// sigs.k8s.io/kind's Go API: the kind config (no default CNI, cgroup v1
// allowed, no CoreDNS or kube-proxy addons), the bridge CNI stand-in that
// replaces kindnetd, OVN in the nodes on the userspace datapath (central on
// the control plane, OVS and ovn-controller everywhere, scripts in ovn/)
// with its end-to-end check, and the deletion of what a failed create left.
package cluster
