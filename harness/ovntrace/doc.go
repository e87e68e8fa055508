// Package ovntrace owns the simulation leg of the harness: it asks OVN
// itself, through ovn-trace against the Southbound logical flows, what a
// given microflow should experience (the DSCP it leaves with, the meters
// that police it, the QoS stage rows it hits, the port it leaves by), and
// it judges three-way agreement between the compiled intent, that
// prediction and the packets a capture saw on the uplink.
//
// Measured on OVN 23.03.1 (Debian 12) and 25.03.0 (Debian 13), the two
// versions the project runs (internal/ovninstall):
//   - ovn-trace prints "unknown datapath" and "error parsing flow" on
//     stdout and exits 0, so both are detected from the text;
//   - an unknown inport makes 23.03's ovn-trace abort (exit 134); 25.03
//     prints "microflow does not specify ingress port", exits 0 and names
//     the port on stderr, which Trace's error keeps;
//   - ip.dscp in a microflow is accepted but ignored (the traced packet
//     always starts with nw_tos=0), so the sender's DSCP is not part of
//     the expression;
//   - on 23.03 marking (ls_out_qos_mark) and metering (ls_out_qos_meter)
//     are two stages, so the highest-priority marking row and the
//     highest-priority metering row that match can be different rows; on
//     25.03 one stage (ls_out_qos) applies the winning row's DSCP and
//     meter together. testdata/ovn-<version> holds each one's traces.
package ovntrace
