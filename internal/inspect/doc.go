// Package inspect owns the read-only commands over a NetworkQoS set:
// explain (every VM's classes with their DSCP, meter and winning rule,
// from the compiler alone), diff (what changes between two sets) and
// audit (the cluster's rows compiled per zone against each zone's
// Northbound, read through internal/ovnnb). A set is manifest files or
// directories, or a live cluster read through its API server, which it
// also turns into the manifests `verify` boots. nqos-sim and kubectl-nqos
// both run these commands; the package links no datapath (no packet
// capture, no netlink), so kubectl-nqos builds for every GOOS.
package inspect
