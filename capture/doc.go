// Package capture owns packet capture on the testbed links (AF_PACKET in a
// network namespace, written to pcap, or watched live by Watch for the
// lifecycle probes), the streaming analysis that
// classifies every captured frame into the scenario's flows (counts, DSCP
// histograms, token-bucket excess, rate series: what package
// harness/verdict judges), and the parsing of OVS meter statistics.
package capture
