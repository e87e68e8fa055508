// Package nbaudit owns the harness's OVN Northbound invariant checks: an
// on-demand Audit of a client's cache, and a Watcher that audits the state
// after every committed transaction on a monitor connection of its own
// (internal/ovsdbmon), remembering each violation with the time it was
// first seen. The invariants: every @port_group and $address_set an owned
// QoS match references exists (a port group's implicit $<pg>_ip4/_ip6 sets
// count), every owned QoS row is on a logical switch, k8s.ovn.org/id is
// present and unique, every owned row names its NetworkQoS, and objects
// that must own nothing own no row.
package nbaudit

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/nqos/nqos/internal/ovnnb"
	"github.com/nqos/nqos/internal/qos"
)

// Violation is one broken invariant.
type Violation struct {
	Row     string // "QoS <id>" or "Port_Group <name>" ...
	Problem string
}

// Audit checks the current state of nb's cache. The result is sorted; a
// failed read is an error, never a clean audit.
func Audit(ctx context.Context, nb *ovnnb.Client) ([]Violation, error) {
	v, err := nb.Tables(ctx)
	if err != nil {
		return nil, fmt.Errorf("audit NB: %w", err)
	}
	return auditor{}.check(v), nil
}

// auditor checks the invariants on consistent states.
type auditor struct {
	// rejected, when not nil, names objects that must own no row at all.
	rejected func(ovnnb.Key) bool
	// refs, when not nil, memoizes the references of each match string
	// across the states a Watcher audits (matches rarely change).
	refs map[string][]ovnnb.MatchRef
}

// maxMemoSlack bounds the memo beyond the current number of QoS rows.
const maxMemoSlack = 4096

// check audits one state.
func (a auditor) check(v ovnnb.Tables) []Violation {
	if a.refs != nil && len(a.refs) > len(v.QoS)+maxMemoSlack {
		clear(a.refs)
	}
	out := a.checkQoS(v)
	for _, pg := range v.PortGroups {
		out = append(out, auditOwner("Port_Group "+pg.Name, pg.ExternalIDs, a.rejected)...)
	}
	for _, as := range v.AddressSets {
		out = append(out, auditOwner("Address_Set "+as.Name, as.ExternalIDs, a.rejected)...)
	}
	slices.SortFunc(out, compareViolations)
	return out
}

// checkQoS audits the owned QoS rows: references, switch, id, owner.
func (a auditor) checkQoS(v ovnnb.Tables) []Violation {
	pgNames := map[string]bool{}
	for _, pg := range v.PortGroups {
		pgNames[pg.Name] = true
	}
	asNames := map[string]bool{}
	for _, as := range v.AddressSets {
		asNames[as.Name] = true
	}
	onSwitch := map[string]bool{}
	for _, ls := range v.Switches {
		for _, q := range ls.QOSRules {
			onSwitch[q] = true
		}
	}
	var out []Violation
	ids := map[string]int{}
	for _, q := range v.QoS {
		if !ovnnb.IsOwned(q.ExternalIDs) {
			continue
		}
		row := "QoS " + q.ExternalIDs[qos.PrimaryIDKey]
		ids[q.ExternalIDs[qos.PrimaryIDKey]]++
		out = append(out, auditMatch(row, a.matchRefs(q.Match), pgNames, asNames)...)
		if !onSwitch[q.UUID] {
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

// compareViolations orders violations by row, then problem.
func compareViolations(a, b Violation) int {
	return cmp.Or(cmp.Compare(a.Row, b.Row), cmp.Compare(a.Problem, b.Problem))
}

// matchRefs lists the references of a match, through the memo if any.
func (a auditor) matchRefs(match string) []ovnnb.MatchRef {
	if refs, ok := a.refs[match]; ok {
		return refs
	}
	refs := ovnnb.MatchRefs(match)
	if a.refs != nil {
		a.refs[match] = refs
	}
	return refs
}

func auditMatch(row string, refs []ovnnb.MatchRef, pgNames, asNames map[string]bool) []Violation {
	var out []Violation
	for _, r := range refs {
		switch {
		case r.Sigil == "@" && !pgNames[r.Name]:
			out = append(out, Violation{Row: row, Problem: "match references missing port group @" + r.Name})
		case r.Sigil == "$" && !asNames[r.Name] && !pgNames[implicitPortGroup(r.Name)]:
			out = append(out, Violation{Row: row, Problem: "match references missing address set $" + r.Name})
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

// auditOwner checks that a row, if owned, names its object and, when
// rejected says so, that the object may own rows at all.
func auditOwner(row string, ext map[string]string, rejected func(ovnnb.Key) bool) []Violation {
	if !ovnnb.IsOwned(ext) {
		return nil
	}
	key, ok := ovnnb.KeyFromOwnerName(ext[qos.ObjectNameKey])
	if !ok {
		return []Violation{{Row: row, Problem: fmt.Sprintf("external_ids %s=%q does not name a NetworkQoS", qos.ObjectNameKey, ext[qos.ObjectNameKey])}}
	}
	if rejected != nil && rejected(key) {
		return []Violation{{Row: row, Problem: fmt.Sprintf("rejected object %s owns %s", key, row)}}
	}
	return nil
}
