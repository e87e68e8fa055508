package ovnnb

import (
	"context"
	"fmt"
	"regexp"
	"sort"
	"strings"

	"github.com/nqos/nqos/internal/ovnnb/nbdb"
	"github.com/nqos/nqos/internal/qos"
)

// Violation is one broken invariant found by Audit or a Watcher.
type Violation struct {
	Row     string // "QoS <id>" or "Port_Group <name>" ...
	Problem string
}

// matchRefs finds @port_group and $address_set references in a match.
var matchRefs = regexp.MustCompile(`([@$])([A-Za-z_][A-Za-z0-9_.]*)`)

// nbView is one read of the four tables the audit looks at: every row,
// owned or not (a match may reference a foreign group or set).
type nbView struct {
	qos      []nbdb.QoS
	pgs      []nbdb.PortGroup
	ases     []nbdb.AddressSet
	switches []nbdb.LogicalSwitch
}

// Audit checks the owned rows: every @pg and $as a QoS match references
// exists (a port group's implicit $<pg>_ip4/$<pg>_ip6 sets count), every
// owned QoS row is on a switch, k8s.ovn.org/id is present and unique, and
// every owned row names its object. The result is sorted.
func (c *Client) Audit() []Violation {
	ctx, cancel := readCtx()
	defer cancel()
	v, err := c.view(ctx)
	if err != nil {
		c.log.Error("audit: read NB cache", "err", err)
		return []Violation{{Row: "NB cache", Problem: fmt.Sprintf("cannot read: %v", err)}}
	}
	return auditor{}.check(v)
}

// view lists the audited tables from the client's cache.
func (c *Client) view(ctx context.Context) (nbView, error) {
	var v nbView
	if err := c.cli.List(ctx, &v.qos); err != nil {
		return v, fmt.Errorf("list QoS: %w", err)
	}
	if err := c.cli.List(ctx, &v.pgs); err != nil {
		return v, fmt.Errorf("list Port_Group: %w", err)
	}
	if err := c.cli.List(ctx, &v.ases); err != nil {
		return v, fmt.Errorf("list Address_Set: %w", err)
	}
	if err := c.cli.List(ctx, &v.switches); err != nil {
		return v, fmt.Errorf("list Logical_Switch: %w", err)
	}
	return v, nil
}

// auditor checks the invariants on consistent states.
type auditor struct {
	// rejected, when not nil, names objects that must own no row at all.
	rejected func(Key) bool
	// refs, when not nil, memoizes the references of each match string
	// across the states a Watcher audits (matches rarely change).
	refs map[string][]matchRef
}

// matchRef is one "@name" or "$name" in a match.
type matchRef struct{ sigil, name string }

// maxMemoSlack bounds the memo beyond the current number of QoS rows.
const maxMemoSlack = 4096

// check audits one state.
func (a auditor) check(v nbView) []Violation {
	if a.refs != nil && len(a.refs) > len(v.qos)+maxMemoSlack {
		clear(a.refs)
	}
	out := a.checkQoS(v)
	for _, pg := range v.pgs {
		if isOwned(pg.ExternalIDs) {
			out = append(out, auditOwner("Port_Group "+pg.Name, pg.ExternalIDs, a.rejected)...)
		}
	}
	for _, as := range v.ases {
		if isOwned(as.ExternalIDs) {
			out = append(out, auditOwner("Address_Set "+as.Name, as.ExternalIDs, a.rejected)...)
		}
	}
	sortViolations(out)
	return out
}

// checkQoS audits the owned QoS rows: references, switch, id, owner.
func (a auditor) checkQoS(v nbView) []Violation {
	pgNames := map[string]bool{}
	for _, pg := range v.pgs {
		pgNames[pg.Name] = true
	}
	asNames := map[string]bool{}
	for _, as := range v.ases {
		asNames[as.Name] = true
	}
	sw := newSwitchIndex(v.switches)
	var out []Violation
	ids := map[string]int{}
	for _, q := range v.qos {
		if !isOwned(q.ExternalIDs) {
			continue
		}
		row := "QoS " + q.ExternalIDs[qos.PrimaryIDKey]
		ids[q.ExternalIDs[qos.PrimaryIDKey]]++
		out = append(out, auditMatch(row, a.matchRefs(q.Match), pgNames, asNames)...)
		if len(sw.refs[q.UUID]) == 0 {
			out = append(out, Violation{Row: row, Problem: "owned QoS row is on no logical switch"})
		}
		out = append(out, auditOwner(row, q.ExternalIDs, a.rejected)...)
	}
	return append(out, auditIDs(ids)...)
}

// auditIDs reports owned QoS rows without, or sharing, a k8s.ovn.org/id.
func auditIDs(ids map[string]int) []Violation {
	var out []Violation
	for id, n := range ids {
		if id == "" {
			out = append(out, Violation{Row: "QoS", Problem: fmt.Sprintf("%d owned QoS rows have no %s", n, qos.PrimaryIDKey)})
		} else if n > 1 {
			out = append(out, Violation{Row: "QoS " + id, Problem: fmt.Sprintf("%d owned QoS rows share this %s", n, qos.PrimaryIDKey)})
		}
	}
	return out
}

func sortViolations(vs []Violation) {
	sort.Slice(vs, func(i, j int) bool {
		if vs[i].Row != vs[j].Row {
			return vs[i].Row < vs[j].Row
		}
		return vs[i].Problem < vs[j].Problem
	})
}

// matchRefs lists the references of a match, through the memo if any.
func (a auditor) matchRefs(match string) []matchRef {
	if refs, ok := a.refs[match]; ok {
		return refs
	}
	var refs []matchRef
	for _, m := range matchRefs.FindAllStringSubmatch(match, -1) {
		refs = append(refs, matchRef{sigil: m[1], name: m[2]})
	}
	if a.refs != nil {
		a.refs[match] = refs
	}
	return refs
}

func auditMatch(row string, refs []matchRef, pgNames, asNames map[string]bool) []Violation {
	var out []Violation
	for _, r := range refs {
		sigil, name := r.sigil, r.name
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

// auditOwner checks that an owned row names its object and, when
// rejected says so, that the object may own rows at all.
func auditOwner(row string, ext map[string]string, rejected func(Key) bool) []Violation {
	key, ok := keyFromOwnerName(ext[qos.ObjectNameKey])
	if !ok {
		return []Violation{{Row: row, Problem: fmt.Sprintf("external_ids %s=%q does not name a NetworkQoS", qos.ObjectNameKey, ext[qos.ObjectNameKey])}}
	}
	if rejected != nil && rejected(key) {
		return []Violation{{Row: row, Problem: fmt.Sprintf("rejected object %s owns %s", key, row)}}
	}
	return nil
}
