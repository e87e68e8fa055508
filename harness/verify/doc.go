// Package verify owns `nqos-sim verify`: from a user's manifests alone it
// takes the traffic classes each VM can hit and the rules that can never
// win a packet from internal/intent (pure), builds a scenario of raw
// sequence-tagged probe flows with the compiled intent as their
// expectations (scenario.go), runs it through the harness runner on the
// real testbed and turns the three-way judged flows into the verify report
// (report.go): per VM and class the DSCP and meter the compiled intent,
// ovn-trace and the uplink capture each give.
package verify
