// Package verify owns `nqos-sim verify`: from a user's manifests alone it
// derives the traffic classes each VM can hit under the NetworkQoS rules
// selecting it (classes.go, pure), finds the rules that can never win a
// packet (shadow.go, pure), builds a scenario of raw sequence-tagged probe
// flows with the compiled intent as their expectations (scenario.go), runs
// it through the harness runner on the real testbed and turns the
// three-way judged flows into the verify report (report.go): per VM and
// class the DSCP and meter the compiled intent, ovn-trace and the uplink
// capture each give.
package verify
