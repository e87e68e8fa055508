package ovnnb

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/nqos/nqos/internal/ovnnb/nbdb"
)

// Tables is one read of every row, owned or not, of the four tables the
// NB invariants are about (a match may reference a foreign group or set).
type Tables struct {
	QoS         []nbdb.QoS
	PortGroups  []nbdb.PortGroup
	AddressSets []nbdb.AddressSet
	Switches    []nbdb.LogicalSwitch
}

// Tables lists the QoS, Port_Group, Address_Set and Logical_Switch tables
// from the cache, each sorted by UUID. A failed read is an error.
func (c *Client) Tables(ctx context.Context) (Tables, error) {
	ctx, cancel := context.WithTimeout(ctx, readTimeout)
	defer cancel()
	var v Tables
	if err := c.cli.List(ctx, &v.QoS); err != nil {
		return Tables{}, fmt.Errorf("list QoS: %w", err)
	}
	if err := c.cli.List(ctx, &v.PortGroups); err != nil {
		return Tables{}, fmt.Errorf("list Port_Group: %w", err)
	}
	if err := c.cli.List(ctx, &v.AddressSets); err != nil {
		return Tables{}, fmt.Errorf("list Address_Set: %w", err)
	}
	if err := c.cli.List(ctx, &v.Switches); err != nil {
		return Tables{}, fmt.Errorf("list Logical_Switch: %w", err)
	}
	if err := c.fresh(ctx); err != nil {
		return Tables{}, fmt.Errorf("list NB tables: %w", err)
	}
	sortByUUID(v.QoS, func(q nbdb.QoS) string { return q.UUID })
	sortByUUID(v.PortGroups, func(p nbdb.PortGroup) string { return p.UUID })
	sortByUUID(v.AddressSets, func(a nbdb.AddressSet) string { return a.UUID })
	sortByUUID(v.Switches, func(s nbdb.LogicalSwitch) string { return s.UUID })
	return v, nil
}

// PortNames lists the names of the logical switch ports, sorted. A
// failed read is an error.
func (c *Client) PortNames(ctx context.Context) ([]string, error) {
	ctx, cancel := context.WithTimeout(ctx, readTimeout)
	defer cancel()
	var lsps []nbdb.LogicalSwitchPort
	if err := c.cli.List(ctx, &lsps); err != nil {
		return nil, fmt.Errorf("list Logical_Switch_Port: %w", err)
	}
	if err := c.fresh(ctx); err != nil {
		return nil, fmt.Errorf("list Logical_Switch_Port: %w", err)
	}
	out := make([]string, len(lsps))
	for i, l := range lsps {
		out[i] = l.Name
	}
	slices.Sort(out)
	return out, nil
}

// MatchRef is one "@port_group" or "$address_set" reference in a match.
type MatchRef struct{ Sigil, Name string }

// matchRefs finds @port_group and $address_set references in a match.
var matchRefs = regexp.MustCompile(`([@$])([A-Za-z_][A-Za-z0-9_.]*)`)

// MatchRefs lists the references of an OVN match, in order.
func MatchRefs(match string) []MatchRef {
	var out []MatchRef
	for _, m := range matchRefs.FindAllStringSubmatch(match, -1) {
		out = append(out, MatchRef{Sigil: m[1], Name: m[2]})
	}
	return out
}

func sortByUUID[T any](rows []T, uuid func(T) string) {
	slices.SortFunc(rows, func(a, b T) int { return strings.Compare(uuid(a), uuid(b)) })
}
