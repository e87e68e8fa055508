// Package live captures on the testbed's links: an AF_PACKET capture in a
// network namespace written to pcap (gopacket's TPACKET_V3 ring, started
// only once a probe frame came back), the one packet socket of the module
// (PacketSocket: probes, raw-frame injection, RARP announcements), the live
// DSCP Watch of the lifecycle probes (frames decoded by package capture's
// Decoder) and OVS meter statistics read with ovs-ofctl. Package capture
// analyses what it captured.
package live
