// Package capture owns packet capture on the testbed links (AF_PACKET in a
// network namespace, written to pcap), the streaming analysis that
// classifies every captured frame into the scenario's flows, the DSCP and
// policing verdicts, and the parsing of OVS meter statistics.
package capture
