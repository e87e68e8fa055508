package qos

import (
	"encoding/json"
	"slices"
)

// RowLines is d's rows (port groups, address sets, QoS rows; not the
// conditions or warnings) as a multiset of canonical lines, "<table>
// <JSON>", with member lists sorted, so two row sets compare by content
// whatever their order: how the harnesses diff the NB against the intent.
func (d Desired) RowLines() map[string]int {
	out := map[string]int{}
	add := func(table string, v any) {
		b, err := json.Marshal(v) // plain structs and string maps: cannot fail; maps marshal with sorted keys
		if err != nil {
			b = []byte(err.Error())
		}
		out[table+" "+string(b)]++
	}
	for _, pg := range d.PortGroups {
		pg.Ports = slices.Sorted(slices.Values(pg.Ports))
		add("Port_Group", pg)
	}
	for _, as := range d.AddressSets {
		as.Addresses = slices.Sorted(slices.Values(as.Addresses))
		add("Address_Set", as)
	}
	for _, q := range d.QoS {
		add("QoS", q)
	}
	return out
}
