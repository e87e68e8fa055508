package qos

import (
	"maps"
	"strings"
)

// PerPortRows counts the per-port rows of a bandwidth-scope per-port
// object: rows that match one logical switch port by name (PortKey set),
// bridging rows not included.
func PerPortRows(rows []QoSRow) int {
	n := 0
	for _, r := range rows {
		if r.ExternalIDs[PortKey] != "" && r.ExternalIDs[BridgeKey] == "" {
			n++
		}
	}
	return n
}

// SourceGroup is the port group a port-group row's match starts with
// ("inport == @<pg> && ..."); "" for any other row.
func SourceGroup(r QoSRow) string {
	rest, ok := strings.CutPrefix(r.Match, "inport == @")
	if !ok || r.ExternalIDs[PortKey] != "" {
		return ""
	}
	pg, _, _ := strings.Cut(rest, " ")
	return pg
}

// BridgeRow is the bridging row of port-group row r for a port that is
// not a member yet: the same switch, priority, action and bandwidth, the
// match with inport == "<port>" in place of the port group, and r's
// k8s.ovn.org/id with ":bridge:<port>" appended (PortKey and BridgeKey
// set). OVN accepts a match naming a port before the port exists and
// ovn-controller installs its flows when the port is bound, so the port
// is covered from its first packet while it joins the group.
func BridgeRow(r QoSRow, port string) QoSRow {
	b := r
	b.Match = portSourceMatch(port) + strings.TrimPrefix(r.Match, sourceMatch(SourceGroup(r)))
	b.ExternalIDs = maps.Clone(r.ExternalIDs)
	b.ExternalIDs[PrimaryIDKey] += ":bridge:" + port
	b.ExternalIDs[PortKey] = port
	b.ExternalIDs[BridgeKey] = "true"
	if r.Bandwidth != nil {
		bw := *r.Bandwidth
		b.Bandwidth = &bw
	}
	return b
}
