// Package intent owns the compiler-only fabric view of a NetworkQoS set:
// what every VM's traffic gets from the compiled QoS rows, without a
// datapath. From a Cluster (the objects as read from manifests or an API
// server, with each VM's addresses, node and logical switch port) it
// derives the traffic classes each VM can send (classes.go), evaluates
// the compiled rows for each class's first packet as OVN's QoS stages do
// (match.go, rows.go), finds the rules that can never win a packet
// (shadow.go) and says how many selected VMs share each meter on a node
// (sharing.go). It is pure: no I/O, no processes, no netlink, no packet
// capture, so it builds for every GOOS.
package intent
