package qos

import (
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"
)

// Compile compiles every NetworkQoS of in (restricted to in.Node) into the
// whole desired state, collision warnings included.
func Compile(in Input) Desired { return Assemble(CompileAll(in)) }

// CompileAll compiles every NetworkQoS of in, sorted by namespace/name,
// parsing each NAD config once for the whole input.
func CompileAll(in Input) []Result {
	rs := CompileObjects(in.NetworkQoSes, NewSnapshot(in), in.Node)
	sort.Slice(rs, func(i, j int) bool { return rs[i].Key() < rs[j].Key() })
	return rs
}

// Assemble merges per-object results into one Desired: every slice
// sorted, collision warnings added, never null in JSON.
func Assemble(rs []Result) Desired {
	d := Desired{
		NetworkQoS:  []ObjectStatus{},
		PortGroups:  []PortGroup{},
		AddressSets: []AddressSet{},
		QoS:         []QoSRow{},
		Warnings:    []string{},
	}
	for _, r := range rs {
		d.NetworkQoS = append(d.NetworkQoS, ObjectStatus{Namespace: r.Namespace, Name: r.Name, Conditions: []Condition{r.Accepted}})
		d.PortGroups = append(d.PortGroups, r.PortGroups...)
		d.AddressSets = append(d.AddressSets, r.AddressSets...)
		d.QoS = append(d.QoS, r.QoS...)
		for _, w := range r.Warnings {
			d.Warnings = append(d.Warnings, w.String())
		}
	}
	d.Warnings = append(d.Warnings, Collisions(rs)...)
	sort.Slice(d.NetworkQoS, func(i, j int) bool {
		a, b := d.NetworkQoS[i], d.NetworkQoS[j]
		return a.Namespace+"/"+a.Name < b.Namespace+"/"+b.Name
	})
	sort.Slice(d.PortGroups, func(i, j int) bool { return d.PortGroups[i].Name < d.PortGroups[j].Name })
	sort.Slice(d.AddressSets, func(i, j int) bool { return d.AddressSets[i].Name < d.AddressSets[j].Name })
	sortQoS(d.QoS)
	sort.Strings(d.Warnings)
	return d
}

// Collisions warns about rows on the same switch with the same OVN
// priority from different objects (one object's per-port rows of a rule
// share theirs) (e.g. rule 12 of priority 5 and rule 2
// of priority 6 are both 10062): OVN leaves their order undefined and
// upstream is silent about it.
func Collisions(rs []Result) []string {
	type slot struct {
		sw   string
		prio int
	}
	users := map[slot][]string{}
	for _, r := range rs {
		seen := map[slot]bool{} // an object's per-port rows of one rule share a slot
		for _, q := range r.QoS {
			s := slot{q.Switch, q.Priority}
			if seen[s] {
				continue
			}
			seen[s] = true
			users[s] = append(users[s], fmt.Sprintf("%s (rule %s)", r.Key(), q.ExternalIDs[RuleIndexKey]))
		}
	}
	var out []string
	for s, who := range users {
		if len(who) < 2 {
			continue
		}
		sort.Strings(who)
		out = append(out, fmt.Sprintf("OVN priority %d on switch %s is used by %s; OVN leaves the order of equal-priority QoS rows undefined",
			s.prio, s.sw, strings.Join(who, " and ")))
	}
	sort.Strings(out)
	return out
}

// WriteJSON writes d as indented JSON without HTML escaping, so matches
// read "&&" rather than "\u0026\u0026".
func WriteJSON(w io.Writer, d Desired) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(d); err != nil {
		return fmt.Errorf("encode desired state: %w", err)
	}
	return nil
}
