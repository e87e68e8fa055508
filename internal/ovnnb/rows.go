package ovnnb

import (
	"fmt"
	"maps"
	"regexp"
	"sort"
	"strings"

	"github.com/nqos/nqos/internal/ovnnb/nbdb"
	"github.com/nqos/nqos/internal/qos"
)

// Rows returns every NetworkQoS-owned row in the compiler's vocabulary:
// port-group ports as LSP names, each QoS row once per switch referencing
// it (Switch "" when none does). Port groups and address sets are sorted
// by name, QoS rows by switch, then k8s.ovn.org/id, then match.
// NetworkQoS and Warnings stay empty.
func (c *Client) Rows() qos.Desired {
	out := qos.Desired{NetworkQoS: []qos.ObjectStatus{}, PortGroups: []qos.PortGroup{},
		AddressSets: []qos.AddressSet{}, QoS: []qos.QoSRow{}, Warnings: []string{}}
	rs, sw, ok := c.ownedView()
	if !ok {
		return out
	}
	ctx, cancel := readCtx()
	defer cancel()
	names, err := c.lspNames(ctx)
	if err != nil {
		c.log.Error("list ports", "err", err)
		return out
	}
	for _, pg := range rs.pgs {
		ports := make([]string, 0, len(pg.Ports))
		for _, u := range pg.Ports {
			ports = append(ports, names[u])
		}
		out.PortGroups = append(out.PortGroups, qos.PortGroup{Name: pg.Name, Ports: sortedSet(ports), ExternalIDs: maps.Clone(pg.ExternalIDs)})
	}
	for _, as := range rs.ases {
		out.AddressSets = append(out.AddressSets, qos.AddressSet{Name: as.Name, Addresses: sortedSet(as.Addresses), ExternalIDs: maps.Clone(as.ExternalIDs)})
	}
	for _, q := range rs.qos {
		switches := sw.refs[q.UUID]
		if len(switches) == 0 {
			switches = []string{""}
		}
		for _, s := range switches {
			out.QoS = append(out.QoS, fromNBQoS(q, s))
		}
	}
	sortQoS(out.QoS)
	return out
}

func sortQoS(rows []qos.QoSRow) {
	sort.SliceStable(rows, func(i, j int) bool {
		a, b := rows[i], rows[j]
		if a.Switch != b.Switch {
			return a.Switch < b.Switch
		}
		if ia, ib := a.ExternalIDs[qos.PrimaryIDKey], b.ExternalIDs[qos.PrimaryIDKey]; ia != ib {
			return ia < ib
		}
		return a.Match < b.Match
	})
}

// Violation is one broken invariant found by Audit.
type Violation struct {
	Row     string // "QoS <id>" or "Port_Group <name>" ...
	Problem string
}

// matchRefs finds @port_group and $address_set references in a match.
var matchRefs = regexp.MustCompile(`([@$])([A-Za-z_][A-Za-z0-9_.]*)`)

// Audit checks the owned rows: every @pg and $as a QoS match references
// exists (a port group's implicit $<pg>_ip4/$<pg>_ip6 sets count), every
// owned QoS row is on a switch, k8s.ovn.org/id is present and unique, and
// every owned row names its object. The result is sorted.
func (c *Client) Audit() []Violation {
	rs, sw, ok := c.ownedView()
	if !ok {
		return []Violation{{Row: "NB cache", Problem: "cannot read the cache (see log)"}}
	}
	ctx, cancel := readCtx()
	defer cancel()
	var pgs []nbdb.PortGroup
	var ases []nbdb.AddressSet
	err := c.cli.List(ctx, &pgs)
	if err == nil {
		err = c.cli.List(ctx, &ases)
	}
	if err != nil {
		return []Violation{{Row: "NB cache", Problem: fmt.Sprintf("cannot read: %v", err)}}
	}
	pgNames := map[string]bool{}
	for _, pg := range pgs {
		pgNames[pg.Name] = true
	}
	asNames := map[string]bool{}
	for _, as := range ases {
		asNames[as.Name] = true
	}
	var out []Violation
	ids := map[string]int{}
	for _, q := range rs.qos {
		row := "QoS " + q.ExternalIDs[qos.PrimaryIDKey]
		ids[q.ExternalIDs[qos.PrimaryIDKey]]++
		out = append(out, auditMatch(row, q.Match, pgNames, asNames)...)
		if len(sw.refs[q.UUID]) == 0 {
			out = append(out, Violation{Row: row, Problem: "owned QoS row is on no logical switch"})
		}
		out = append(out, auditOwner(row, q.ExternalIDs)...)
	}
	for id, n := range ids {
		if id == "" {
			out = append(out, Violation{Row: "QoS", Problem: fmt.Sprintf("%d owned QoS rows have no %s", n, qos.PrimaryIDKey)})
		} else if n > 1 {
			out = append(out, Violation{Row: "QoS " + id, Problem: fmt.Sprintf("%d owned QoS rows share this %s", n, qos.PrimaryIDKey)})
		}
	}
	for _, pg := range rs.pgs {
		out = append(out, auditOwner("Port_Group "+pg.Name, pg.ExternalIDs)...)
	}
	for _, as := range rs.ases {
		out = append(out, auditOwner("Address_Set "+as.Name, as.ExternalIDs)...)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Row != out[j].Row {
			return out[i].Row < out[j].Row
		}
		return out[i].Problem < out[j].Problem
	})
	return out
}

func auditMatch(row, match string, pgNames, asNames map[string]bool) []Violation {
	var out []Violation
	for _, m := range matchRefs.FindAllStringSubmatch(match, -1) {
		sigil, name := m[1], m[2]
		switch {
		case sigil == "@" && !pgNames[name]:
			out = append(out, Violation{Row: row, Problem: "match references missing port group @" + name})
		case sigil == "$" && !asNames[name] && !pgNames[implicitPortGroup(name)]:
			out = append(out, Violation{Row: row, Problem: "match references missing address set $" + name})
		}
	}
	return out
}

// implicitPortGroup returns the port group behind OVN's automatic
// $<pg>_ip4 / $<pg>_ip6 address sets, or "".
func implicitPortGroup(as string) string {
	for _, sfx := range []string{"_ip4", "_ip6"} {
		if pg, ok := strings.CutSuffix(as, sfx); ok {
			return pg
		}
	}
	return ""
}

func auditOwner(row string, ext map[string]string) []Violation {
	if _, ok := keyFromOwnerName(ext[qos.ObjectNameKey]); !ok {
		return []Violation{{Row: row, Problem: fmt.Sprintf("external_ids %s=%q does not name a NetworkQoS", qos.ObjectNameKey, ext[qos.ObjectNameKey])}}
	}
	return nil
}
