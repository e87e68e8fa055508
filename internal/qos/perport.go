package qos

// PerPortRows counts the rows that match one logical switch port by name
// (PortKey set) instead of a port group.
func PerPortRows(rows []QoSRow) int {
	n := 0
	for _, r := range rows {
		if r.ExternalIDs[PortKey] != "" {
			n++
		}
	}
	return n
}
