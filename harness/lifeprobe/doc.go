// Package lifeprobe holds the pure analyses and results of the lifecycle
// steps (VM operations, daemon and controller restarts, the upgrade, a VM
// started under a probe, spoofing): probe-stream directions and duration
// spreads, when an LSP first appeared and joined or left a port group,
// the Northbound transactions an independent monitor saw and the order
// of a legacy migration among them, and the difference between the
// compiler's rows and the Northbound's. It touches no testbed: package
// harness/localnetenv runs the operations and fills these types, package
// harness/verdict judges the figures.
package lifeprobe
