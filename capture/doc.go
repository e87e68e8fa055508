// Package capture owns the analysis of packet captures: reading pcap
// files, decoding frames without allocation, classifying every frame into
// the scenario's flows (counts, DSCP histograms, token-bucket excess, rate
// series: what package harness/verdict judges) and decoding frames seen
// live into Packets. It is pure: it opens no socket and runs no process.
// Package capture/live captures on the testbed's links (AF_PACKET inside a
// network namespace, written to pcap, or watched live) and reads OVS meter
// statistics.
package capture
