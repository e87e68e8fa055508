// Package audit owns the comparison of a NetworkQoS set's compiled rows
// with the rows one OVN Northbound holds (one zone): QoS rows, port
// groups and their members, address sets and their entries that are
// missing, extra or different; rows of other writers inside nqos's
// priority range on the switches nqos writes to; objects whose status
// says applied in the zone while their rows are absent. It is pure: the
// caller compiles the intent and reads the Northbound, and hands both in.
package audit
