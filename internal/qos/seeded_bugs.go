package qos

import (
	"math"
	"net/netip"
	"sort"
	"strings"
)

// The helpers below exist only for the seeded bugs of internal/seeded:
// each is called from a branch `if seeded.Active == seeded.X`, which a
// normal build folds away, so none of them is reachable without its
// nqos_bug_<id> build tag. The small ones are kept out of line
// (go:noinline) so TestSeededBugsUnreachable can see them in a binary.

// sourceByIP is the SourceByIP bug: upstream's pre-OKEP-6815 source, one
// address set per family ("src" rule index) holding the source pods' IPs
// from pod-networks, matched as "ip4.src == {$set}". On an ipamless
// network the sets are empty, so the rows match nothing.
func (c *objectCompiler) sourceByIP(n Network, nads map[string]bool) string {
	var addrs []netip.Addr
	for _, p := range c.sourcePods() {
		addrs = append(addrs, podIPs(p, nads)...)
	}
	sort.Slice(addrs, func(i, j int) bool { return addrs[i].Less(addrs[j]) })
	var parts []string
	for _, fam := range n.families() {
		ids := setIDs(n.Name, c.nq.Namespace, c.nq.Name, "src", "0", fam)
		as := AddressSet{Name: hashForOVN(ids[PrimaryIDKey]), Addresses: filterFamily(addrs, fam), ExternalIDs: ids}
		c.res.AddressSets = append(c.res.AddressSets, as)
		parts = append(parts, familyField(fam)+".src == {$"+as.Name+"}")
	}
	if len(parts) == 1 {
		return parts[0]
	}
	return "(" + strings.Join(parts, " || ") + ")"
}

// withDiscoverableIPs is the PartialRejected bug's network choice: the
// selected networks on which a rejected object's selectors could resolve.
//
//go:noinline
func withDiscoverableIPs(nets []Network) []Network {
	var out []Network
	for _, n := range nets {
		if n.DiscoverablePodIPs() {
			out = append(out, n)
		}
	}
	return out
}

// kilobitsAsBytes is the BurstUnits bug: the burst converted to bytes
// (1 kilobit = 125 bytes), the unit tc and many shapers use, and written
// where OVN expects kilobits, so the bucket is 125 times too deep.
// Saturates at the column's uint32 bound.
//
//go:noinline
func kilobitsAsBytes(kbit uint32) uint32 {
	return uint32(min(uint64(kbit)*125, math.MaxUint32))
}
