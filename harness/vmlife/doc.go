// Package vmlife owns the VM lifecycle operations with measurements
// (scenarios 07-vm-after-policy, 08-vm-lifecycle and 12-spoofing): a VM
// appearing after the NetworkQoS that selects it, OVN's own port-group
// change time as the baseline, live migration under constant-rate traffic
// in both emulation modes, a launcher restart and a guest IP change, and a
// guest spoofing another class's source IP and MAC. Each operation drives
// the real testbed (topo/localnet), VMs (kubevirt) and traffic (UDP
// probes, raw frames) while the uplinks are watched, and returns a typed
// result (JSON-tagged) with the measured figures for reports. Assertions
// belong to the callers (package harness/verdict), with two exceptions: an
// operation returns an error naming the VM when a figure cannot be
// measured at all (nothing to wait for arrived), and Spoof returns the
// standard two-sided verdicts of package harness/verdict for the frames it
// classified.
package vmlife
