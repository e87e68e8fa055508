package audit

import (
	"fmt"
	"slices"

	"github.com/nqos/nqos/internal/qos"
)

// nqos's QoS priorities are upstream's formula 10000 + priority*10 +
// rule index, with spec.priority 0..100 and at most 20 rules: a row of
// another writer inside this range on a switch nqos writes to competes
// with nqos's rows for the same packets.
const (
	PriorityMin = 10000
	PriorityMax = 10000 + 100*10 + 19
)

// InPriorityRange reports whether p is a priority nqos can write.
func InPriorityRange(p int) bool { return p >= PriorityMin && p <= PriorityMax }

// foreign reports the rows of other writers inside nqos's priority range
// on the switches the expected rows are on.
func (c *comparer) foreign(want []qos.QoSRow, rows []Foreign) {
	switches := map[string][]string{} // switch -> objects with rows on it
	for _, w := range want {
		if o := objectOf(w.ExternalIDs); !slices.Contains(switches[w.Switch], o) {
			switches[w.Switch] = append(switches[w.Switch], o)
		}
	}
	for _, f := range rows {
		objs, ok := switches[f.Switch]
		if !ok || !InPriorityRange(f.Priority) {
			continue
		}
		slices.Sort(objs)
		row := f.ID
		if row == "" {
			row = f.UUID
		}
		c.add(ForeignQoS, "", TableQoS, row+" on "+f.Switch,
			fmt.Sprintf("row of %s at priority %d (inside nqos's %d..%d) beside the rows of %v: match %q",
				f.Owner, f.Priority, PriorityMin, PriorityMax, objs, f.Match))
	}
}

// applied reports the objects whose status says applied in the zone
// while some of their expected rows are absent.
func (c *comparer) applied(want Expected, got qos.Desired) {
	have := map[string]bool{}
	for _, r := range got.QoS {
		have[qosKey(r)] = true
	}
	for _, pg := range got.PortGroups {
		have[pg.Name] = true
	}
	for _, as := range got.AddressSets {
		have[as.Name] = true
	}
	absent := map[string][]string{}
	for _, r := range want.Rows.QoS {
		if k := qosKey(r); !have[k] {
			absent[objectOf(r.ExternalIDs)] = append(absent[objectOf(r.ExternalIDs)], TableQoS+" "+k)
		}
	}
	for _, pg := range want.Rows.PortGroups {
		if !have[pg.Name] {
			absent[objectOf(pg.ExternalIDs)] = append(absent[objectOf(pg.ExternalIDs)], TablePortGroup+" "+pg.Name)
		}
	}
	for _, as := range want.Rows.AddressSets {
		if !have[as.Name] {
			absent[objectOf(as.ExternalIDs)] = append(absent[objectOf(as.ExternalIDs)], TableAddressSet+" "+as.Name)
		}
	}
	for _, o := range want.Objects {
		rows := absent[o.Key]
		if o.AppliedCondition == "" || len(rows) == 0 {
			continue
		}
		c.add(AppliedButAbsent, o.Key, "status", o.AppliedCondition,
			fmt.Sprintf("condition %s is True while %d expected rows are absent: %v", o.AppliedCondition, len(rows), rows))
	}
}
