package cni

import (
	"crypto/sha256"
	"encoding/hex"
	"net"
)

// hostPrefix starts the name of every node end the plugin creates.
const hostPrefix = "nq"

// HostIfName is the node end of the veth of pod interface ifname in
// sandbox containerID: "nq" and 13 hex digits of a SHA-256 over both
// (15 characters, the kernel's limit).
func HostIfName(containerID, ifname string) string {
	sum := sha256.Sum256([]byte(containerID + "/" + ifname))
	return hostPrefix + hex.EncodeToString(sum[:])[:13]
}

// GeneratedMAC is the MAC of a pod interface whose entry names none: a
// locally administered unicast address derived from the sandbox and the
// interface, so CHECK and repeated ADDs agree on it.
func GeneratedMAC(containerID, ifname string) net.HardwareAddr {
	sum := sha256.Sum256([]byte("mac/" + containerID + "/" + ifname))
	mac := net.HardwareAddr(sum[:6])
	mac[0] = mac[0]&^1 | 2
	return mac
}
