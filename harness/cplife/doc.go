// Package cplife owns the control-plane lifecycle operations of the
// harness (scenarios 09-daemon-restarts, 10-controller-restart and
// 11-upgrade) and their measurements:
// running the controller as an `nqos-sim controller` subprocess and
// restarting or SIGKILLing it (also right after the Nth Northbound
// transaction of a burst, counted by an independent raw OVSDB monitor),
// restarting OVN/OVS daemons under constant-rate marked and policed
// traffic and measuring the marking gap on the uplink, pre-seeding the
// Northbound with legacy address-set rows and checking the order in which
// the controller migrates them. (Churn, scenario 13, is the declarative
// `churn` step of package harness.) Every operation returns a typed, JSON-tagged result
// that a report can show; comparing the Northbound with the compiler's
// view of the cluster (DiffRows, WaitConverged) is the shared verdict.
package cplife
