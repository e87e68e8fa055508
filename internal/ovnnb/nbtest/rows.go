package nbtest

import (
	"fmt"
	"hash/fnv"
	"maps"
	"slices"
	"strconv"

	"github.com/nqos/nqos/internal/ovnnb"
	"github.com/nqos/nqos/internal/qos"
)

// Rule is one egress rule of a test object.
type Rule struct {
	DSCP        int
	Rate, Burst uint32
	Dest        string // match fragment after the source, "" for none
}

// Object builds the rows a NetworkQoS on network net with these rules
// owns on switch sw, spelled as the contract's external_ids and naming
// say (independently of the compiler's helpers): one port group holding
// ports, one QoS row per rule.
func Object(net, sw string, key ovnnb.Key, priority int, ports []string, rules ...Rule) ovnnb.ObjectRows {
	objID := qos.ControllerName(net) + ":NetworkQoS:" + key.Namespace + ":" + key.Name
	pg := HashName(objID)
	rows := ovnnb.ObjectRows{PortGroups: []qos.PortGroup{{Name: pg, Ports: ports, ExternalIDs: IDs(net, key, objID)}}}
	for i, r := range rules {
		ext := IDs(net, key, objID+":"+strconv.Itoa(i))
		ext[qos.RuleIndexKey] = strconv.Itoa(i)
		match := "inport == @" + pg + " && (ip4 || ip6)"
		if r.Dest != "" {
			match = "inport == @" + pg + " && " + r.Dest
		}
		row := qos.QoSRow{Switch: sw, Direction: qos.DirectionToLport, Priority: 10000 + priority*10 + i,
			Match: match, Action: qos.Action{DSCP: r.DSCP}, ExternalIDs: ext}
		if r.Rate > 0 || r.Burst > 0 {
			row.Bandwidth = &qos.Bandwidth{Rate: r.Rate, Burst: r.Burst}
		}
		rows.QoS = append(rows.QoS, row)
	}
	return rows
}

// DestSet adds a destination address set for rule i of an Object and
// returns its name (the rule's match is left to the caller).
func DestSet(net string, key ovnnb.Key, rows *ovnnb.ObjectRows, i int, addrs ...string) string {
	id := fmt.Sprintf("%s-nqos-controller:NetworkQoS:%s:%s:%d:0:v4", net, key.Namespace, key.Name, i)
	ext := IDs(net, key, id)
	ext[qos.RuleIndexKey], ext[qos.IPBlockIndexKey], ext[qos.IPFamilyKey] = strconv.Itoa(i), "0", "v4"
	name := HashName(id)
	rows.AddressSets = append(rows.AddressSets, qos.AddressSet{Name: name, Addresses: addrs, ExternalIDs: ext})
	return name
}

// DestMatch adds a destination address set for rule i of a Fixture
// object and narrows the rule's match to it.
func DestMatch(key ovnnb.Key, rows *ovnnb.ObjectRows, i int, addrs ...string) {
	name := DestSet(FixtureNet, key, rows, i, addrs...)
	rows.QoS[i].Match += " && ip4.dst == {$" + name + "}"
}

// PortNames are n port names "<prefix>_vm000", "<prefix>_vm001"...
func PortNames(prefix string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("%s_vm%03d", prefix, i)
	}
	return out
}

// IDs are the external_ids of a row of key on net with k8s.ovn.org/id id.
func IDs(net string, key ovnnb.Key, id string) map[string]string {
	return map[string]string{
		qos.OwnerControllerKey: qos.ControllerName(net),
		qos.OwnerTypeKey:       qos.OwnerType,
		qos.ObjectNameKey:      key.Namespace + ":" + key.Name,
		qos.PrimaryIDKey:       id,
		qos.NetworkKey:         net,
	}
}

// HashName is upstream's OVN object name for an id: "a" + FNV-64a.
func HashName(s string) string {
	h := fnv.New64a()
	_, _ = h.Write([]byte(s))
	return "a" + strconv.FormatUint(h.Sum64(), 10)
}

// ExtArgs spells external_ids for ovn-nbctl create/set, sorted by key.
func ExtArgs(ext map[string]string) []string {
	out := make([]string, 0, len(ext))
	for _, k := range slices.Sorted(maps.Keys(ext)) {
		out = append(out, fmt.Sprintf(`external_ids:"%s"="%s"`, k, ext[k]))
	}
	return out
}
