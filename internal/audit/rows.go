package audit

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/nqos/nqos/internal/qos"
)

// Table names as the Northbound spells them.
const (
	TableQoS        = "QoS"
	TablePortGroup  = "Port_Group"
	TableAddressSet = "Address_Set"
)

// qosKey names a QoS row: its k8s.ovn.org/id on its switch.
func qosKey(r qos.QoSRow) string {
	return r.ExternalIDs[qos.PrimaryIDKey] + " on " + switchName(r.Switch)
}

func switchName(s string) string {
	if s == "" {
		return "no switch"
	}
	return s
}

func (c *comparer) qosRows(want, got []qos.QoSRow) {
	have := map[string]qos.QoSRow{}
	for _, r := range got {
		have[qosKey(r)] = r
	}
	expected := map[string]bool{}
	for _, w := range want {
		k := qosKey(w)
		expected[k] = true
		g, ok := have[k]
		switch {
		case !ok:
			c.add(MissingQoS, objectOf(w.ExternalIDs), TableQoS, k, "absent: want "+qosText(w))
		case qosDiff(w, g) != "":
			c.add(DifferentQoS, objectOf(w.ExternalIDs), TableQoS, k, qosDiff(w, g))
		}
	}
	for _, g := range got {
		if k := qosKey(g); !expected[k] {
			c.add(ExtraQoS, objectOf(g.ExternalIDs), TableQoS, k, "no object expects it: "+qosText(g))
		}
	}
}

// qosText is a row's columns in one line.
func qosText(r qos.QoSRow) string {
	return fmt.Sprintf("priority %d, dscp %d, %s, match %q", r.Priority, r.Action.DSCP, bandwidthText(r.Bandwidth), r.Match)
}

func bandwidthText(b *qos.Bandwidth) string {
	if b == nil || b.Rate == 0 && b.Burst == 0 {
		return "no meter"
	}
	return fmt.Sprintf("rate %d kbps burst %d kbit", b.Rate, b.Burst)
}

// qosDiff lists the columns of got that differ from want ("" when none).
func qosDiff(want, got qos.QoSRow) string {
	var d []string
	add := func(col string, w, g any) { d = append(d, fmt.Sprintf("%s %v, want %v", col, g, w)) }
	if want.Action.DSCP != got.Action.DSCP {
		add("dscp", want.Action.DSCP, got.Action.DSCP)
	}
	if want.Priority != got.Priority {
		add("priority", want.Priority, got.Priority)
	}
	if want.Match != got.Match {
		add("match", fmt.Sprintf("%q", want.Match), fmt.Sprintf("%q", got.Match))
	}
	if wd, gd := direction(want.Direction), direction(got.Direction); wd != gd {
		add("direction", wd, gd)
	}
	if wb, gb := bandwidthText(want.Bandwidth), bandwidthText(got.Bandwidth); wb != gb {
		add("bandwidth", wb, gb)
	}
	if !maps.Equal(want.ExternalIDs, got.ExternalIDs) {
		add("external_ids", mapText(want.ExternalIDs), mapText(got.ExternalIDs))
	}
	return strings.Join(d, "; ")
}

// direction is a QoS direction with the compiler's default.
func direction(s string) string {
	if s == "" {
		return qos.DirectionToLport
	}
	return s
}

func mapText(m map[string]string) string {
	keys := slices.Sorted(maps.Keys(m))
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = k + "=" + m[k]
	}
	return "{" + strings.Join(parts, ",") + "}"
}

// set is a port group or an address set: a named row with members.
type set struct {
	name    string
	members []string
	ext     map[string]string
}

// setKinds are the findings of one table of sets.
type setKinds struct {
	table, what, whats                   string
	missingSet, extraSet, missing, extra Kind
}

func portGroupKinds() setKinds {
	return setKinds{TablePortGroup, "port", "ports", MissingPortGroup, ExtraPortGroup, MissingMember, ExtraMember}
}

func addressSetKinds() setKinds {
	return setKinds{TableAddressSet, "address", "addresses", MissingAddressSet, ExtraAddressSet, MissingAddress, ExtraAddress}
}

func portGroupSets(pgs []qos.PortGroup) []set {
	out := make([]set, len(pgs))
	for i, pg := range pgs {
		out[i] = set{pg.Name, pg.Ports, pg.ExternalIDs}
	}
	return out
}

func addressSets(ases []qos.AddressSet) []set {
	out := make([]set, len(ases))
	for i, as := range ases {
		out[i] = set{as.Name, as.Addresses, as.ExternalIDs}
	}
	return out
}

// sets compares the sets of one table by name, then their members.
func (c *comparer) sets(k setKinds, want, got []set) {
	have := map[string]set{}
	for _, g := range got {
		have[g.name] = g
	}
	expected := map[string]bool{}
	for _, w := range want {
		expected[w.name] = true
		obj := objectOf(w.ext)
		g, ok := have[w.name]
		if !ok {
			c.add(k.missingSet, obj, k.table, w.name, fmt.Sprintf("absent: want %s %v", k.whats, w.members))
			continue
		}
		c.members(obj, k, w.name, w.members, g.members)
		if !maps.Equal(w.ext, g.ext) {
			c.add(DifferentExternalIDs, obj, k.table, w.name, fmt.Sprintf("external_ids %s, want %s", mapText(g.ext), mapText(w.ext)))
		}
	}
	for _, g := range got {
		if !expected[g.name] {
			c.add(k.extraSet, objectOf(g.ext), k.table, g.name, fmt.Sprintf("no object expects it (%s %v)", k.whats, g.members))
		}
	}
}

// members reports each element of want absent from got and each element
// of got absent from want.
func (c *comparer) members(obj string, k setKinds, row string, want, got []string) {
	for _, w := range setMinus(want, got) {
		c.add(k.missing, obj, k.table, row, k.what+" "+w+" absent")
	}
	for _, g := range setMinus(got, want) {
		c.add(k.extra, obj, k.table, row, k.what+" "+g+" not expected")
	}
}

// setMinus is the sorted, distinct elements of a not in b.
func setMinus(a, b []string) []string {
	inB := map[string]bool{}
	for _, x := range b {
		inB[x] = true
	}
	var out []string
	for _, x := range a {
		if !inB[x] {
			out = append(out, x)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}
