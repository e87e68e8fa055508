package localnet

import (
	"fmt"
	"path/filepath"
	"regexp"
)

// runIDPattern is the accepted run ID: it is embedded in interface names,
// which the kernel limits to 15 characters.
var runIDPattern = regexp.MustCompile(`^[a-z0-9]{1,4}$`)

// ValidateRunID reports whether id can be used as a run ID.
func ValidateRunID(id string) error {
	if !runIDPattern.MatchString(id) {
		return fmt.Errorf("run ID %q: must be 1-4 characters of [a-z0-9]", id)
	}
	return nil
}

// RunDir is the directory holding a run's sockets, databases, logs,
// pidfiles and state.json.
func RunDir(runID string) string { return filepath.Join("/tmp", "nqos-"+runID) }

// NetnsPrefix is the prefix of every network namespace of a run.
func NetnsPrefix(runID string) string { return "nqos-" + runID + "-" }

// NodeName is the Kubernetes node and OVN chassis name of node i (1-based).
func NodeName(i int) string { return fmt.Sprintf("node%d", i) }

func nodeNetns(runID, node string) string   { return NetnsPrefix(runID) + node }
func fabricNetns(runID string) string       { return NetnsPrefix(runID) + "fabric" }
func hostNetns(runID, host string) string   { return NetnsPrefix(runID) + "host-" + host }
func guestNetns(runID, guest string) string { return NetnsPrefix(runID) + "vm-" + guest }

// GuestNetnsName is the namespace of a guest of run runID.
func GuestNetnsName(runID, guest string) string { return guestNetns(runID, guest) }

// uplinkNames are the node-side and fabric-side names of node i's uplink.
func uplinkNames(runID string, i int) (nodeSide, fabricSide string) {
	return fmt.Sprintf("nq%sn%dup", runID, i), fmt.Sprintf("nq%sn%dfb", runID, i)
}

// hostLinkNames are the host-side and fabric-side names of host i's NIC.
func hostLinkNames(runID string, i int) (hostSide, fabricSide string) {
	return fmt.Sprintf("nq%sh%d", runID, i), fmt.Sprintf("nq%sh%df", runID, i)
}

// guestLinkNames are the node-side and guest-side names of plug n.
func guestLinkNames(runID string, n int) (nodeSide, guestSide string) {
	return fmt.Sprintf("nq%sv%d", runID, n), fmt.Sprintf("nq%sg%d", runID, n)
}

// rootLinkPattern matches every link name a run creates in the root
// namespace before moving it, so Down can remove leftovers of a crash.
func rootLinkPattern(runID string) *regexp.Regexp {
	return regexp.MustCompile(`^nq` + regexp.QuoteMeta(runID) + `(n\d+(up|fb)|[hr]\d+f?|[vg]\d+)$`)
}

// ifindexBase is the first explicit ifindex of a run: distinct runs use
// distinct ranges so every veth end gets a unique ifindex.
func ifindexBase(runID string) int {
	h := uint32(2166136261)
	for i := 0; i < len(runID); i++ {
		h ^= uint32(runID[i])
		h *= 16777619
	}
	return 100000 + int(h%4000)*400
}

// GuestBridge is the guest NIC: a bridge that keeps its neighbour cache
// when its port loses carrier during a re-plug.
const GuestBridge = "eth0"
