package ovnnb

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"

	"github.com/ovn-kubernetes/libovsdb/model"

	"github.com/nqos/nqos/internal/ovnnb/nbdb"
	"github.com/nqos/nqos/internal/qos"
)

// Key names one NetworkQoS.
type Key struct{ Namespace, Name string }

// String is "ns/name".
func (k Key) String() string { return k.Namespace + "/" + k.Name }

// ownerName is the k8s.ovn.org/name value of the object's rows.
func (k Key) ownerName() string { return k.Namespace + ":" + k.Name }

// KeyFromOwnerName parses a k8s.ovn.org/name value "<ns>:<name>"
// (namespaces cannot hold ':'); ok is false when it names no object.
func KeyFromOwnerName(s string) (Key, bool) {
	ns, name, ok := strings.Cut(s, ":")
	if !ok || ns == "" || name == "" {
		return Key{}, false
	}
	return Key{Namespace: ns, Name: name}, true
}

func ownedBy(ext map[string]string, key Key) bool {
	return IsOwned(ext) && ext[qos.ObjectNameKey] == key.ownerName()
}

// rowSet is a consistent-enough read of the rows of interest; each table
// is listed from the cache once.
type rowSet struct {
	qos  []nbdb.QoS
	pgs  []nbdb.PortGroup
	ases []nbdb.AddressSet
}

// listOwned lists the owned rows accepted by keep, sorted by UUID.
func (c *Client) listOwned(ctx context.Context, keep func(map[string]string) bool) (rowSet, error) {
	var rs rowSet
	if err := c.cli.WhereCache(func(q *nbdb.QoS) bool { return keep(q.ExternalIDs) }).List(ctx, &rs.qos); err != nil {
		return rs, fmt.Errorf("list QoS: %w", err)
	}
	if err := c.cli.WhereCache(func(p *nbdb.PortGroup) bool { return keep(p.ExternalIDs) }).List(ctx, &rs.pgs); err != nil {
		return rs, fmt.Errorf("list Port_Group: %w", err)
	}
	if err := c.cli.WhereCache(func(a *nbdb.AddressSet) bool { return keep(a.ExternalIDs) }).List(ctx, &rs.ases); err != nil {
		return rs, fmt.Errorf("list Address_Set: %w", err)
	}
	if err := c.fresh(ctx); err != nil {
		return rs, fmt.Errorf("list owned rows: %w", err)
	}
	sortRowSet(&rs)
	return rs, nil
}

// ownedBy lists key's rows through the k8s.ovn.org/name client index.
func (c *Client) ownedBy(ctx context.Context, key Key) (rowSet, error) {
	var rs rowSet
	byName := map[string]string{qos.ObjectNameKey: key.ownerName()}
	if err := listIndexed(ctx, c, &nbdb.QoS{ExternalIDs: byName}, &rs.qos); err != nil {
		return rs, err
	}
	if err := listIndexed(ctx, c, &nbdb.PortGroup{ExternalIDs: byName}, &rs.pgs); err != nil {
		return rs, err
	}
	if err := listIndexed(ctx, c, &nbdb.AddressSet{ExternalIDs: byName}, &rs.ases); err != nil {
		return rs, err
	}
	rs.qos = slices.DeleteFunc(rs.qos, func(q nbdb.QoS) bool { return !ownedBy(q.ExternalIDs, key) })
	rs.pgs = slices.DeleteFunc(rs.pgs, func(p nbdb.PortGroup) bool { return !ownedBy(p.ExternalIDs, key) })
	rs.ases = slices.DeleteFunc(rs.ases, func(a nbdb.AddressSet) bool { return !ownedBy(a.ExternalIDs, key) })
	if err := c.fresh(ctx); err != nil {
		return rs, fmt.Errorf("list rows of NetworkQoS %s: %w", key, err)
	}
	sortRowSet(&rs)
	return rs, nil
}

// listIndexed lists the rows of probe's table equal to probe on an index.
func listIndexed[T any](ctx context.Context, c *Client, probe model.Model, out *[]T) error {
	if err := c.cli.Where(probe).List(ctx, out); err != nil {
		return fmt.Errorf("list %T by %s: %w", probe, qos.ObjectNameKey, err)
	}
	return nil
}

func sortRowSet(rs *rowSet) {
	sort.Slice(rs.qos, func(i, j int) bool { return rs.qos[i].UUID < rs.qos[j].UUID })
	sort.Slice(rs.pgs, func(i, j int) bool { return rs.pgs[i].Name < rs.pgs[j].Name })
	sort.Slice(rs.ases, func(i, j int) bool { return rs.ases[i].Name < rs.ases[j].Name })
}

func (c *Client) allOwned(ctx context.Context) (rowSet, error) {
	return c.listOwned(ctx, IsOwned)
}

// ownedView reads every owned row and the switch bindings, bounded by
// readTimeout on top of ctx: libovsdb waits for a consistent cache, which
// never comes while disconnected.
func (c *Client) ownedView(ctx context.Context) (rowSet, switchIndex, error) {
	ctx, cancel := context.WithTimeout(ctx, readTimeout)
	defer cancel()
	rs, err := c.allOwned(ctx)
	if err != nil {
		return rs, switchIndex{}, err
	}
	sw, err := c.switchIndex(ctx)
	if err != nil {
		return rs, sw, err
	}
	return rs, sw, nil
}

// switchIndex maps switch names to UUIDs and QoS rows to the names of
// the switches that reference them.
type switchIndex struct {
	byName map[string]string
	refs   map[string][]string
}

func (c *Client) switchIndex(ctx context.Context) (switchIndex, error) {
	var lss []nbdb.LogicalSwitch
	if err := c.cli.List(ctx, &lss); err != nil {
		return switchIndex{}, fmt.Errorf("list Logical_Switch: %w", err)
	}
	if err := c.fresh(ctx); err != nil {
		return switchIndex{}, fmt.Errorf("list Logical_Switch: %w", err)
	}
	return newSwitchIndex(lss), nil
}

// newSwitchIndex indexes switches by name and QoS rows by the switches
// referencing them.
func newSwitchIndex(lss []nbdb.LogicalSwitch) switchIndex {
	idx := switchIndex{byName: map[string]string{}, refs: map[string][]string{}}
	for _, ls := range lss {
		idx.byName[ls.Name] = ls.UUID
		for _, q := range ls.QOSRules {
			idx.refs[q] = append(idx.refs[q], ls.Name)
		}
	}
	for _, names := range idx.refs {
		sort.Strings(names)
	}
	return idx
}

// lspNames maps Logical_Switch_Port UUIDs to names.
func (c *Client) lspNames(ctx context.Context) (map[string]string, error) {
	var lsps []nbdb.LogicalSwitchPort
	if err := c.cli.List(ctx, &lsps); err != nil {
		return nil, fmt.Errorf("list Logical_Switch_Port: %w", err)
	}
	if err := c.fresh(ctx); err != nil {
		return nil, fmt.Errorf("list Logical_Switch_Port: %w", err)
	}
	out := make(map[string]string, len(lsps))
	for _, p := range lsps {
		out[p.UUID] = p.Name
	}
	return out, nil
}

// toNBQoS is the NB row for a compiled QoS row (UUID unset).
func toNBQoS(r qos.QoSRow) nbdb.QoS {
	q := nbdb.QoS{
		Direction:   r.Direction,
		Match:       r.Match,
		Priority:    r.Priority,
		Action:      map[string]int{nbdb.QoSActionDSCP: r.Action.DSCP},
		Bandwidth:   map[string]int{},
		ExternalIDs: maps.Clone(r.ExternalIDs),
	}
	if q.Direction == "" {
		q.Direction = nbdb.QoSDirectionToLport
	}
	if r.Bandwidth != nil && r.Bandwidth.Rate > 0 {
		q.Bandwidth[nbdb.QoSBandwidthRate] = int(r.Bandwidth.Rate)
	}
	if r.Bandwidth != nil && r.Bandwidth.Burst > 0 {
		q.Bandwidth[nbdb.QoSBandwidthBurst] = int(r.Bandwidth.Burst)
	}
	return q
}

// fromNBQoS is the compiler-vocabulary form of an NB row on one switch.
func fromNBQoS(q nbdb.QoS, sw string) qos.QoSRow {
	r := qos.QoSRow{
		Switch:      sw,
		Direction:   q.Direction,
		Priority:    q.Priority,
		Match:       q.Match,
		Action:      qos.Action{DSCP: q.Action[nbdb.QoSActionDSCP]},
		ExternalIDs: maps.Clone(q.ExternalIDs),
	}
	rate, burst := q.Bandwidth[nbdb.QoSBandwidthRate], q.Bandwidth[nbdb.QoSBandwidthBurst]
	if rate > 0 || burst > 0 {
		r.Bandwidth = &qos.Bandwidth{Rate: uint32(rate), Burst: uint32(burst)}
	}
	return r
}

// sameQoS compares every column Apply writes.
func sameQoS(a, b nbdb.QoS) bool {
	return a.Direction == b.Direction && a.Match == b.Match && a.Priority == b.Priority &&
		maps.Equal(a.Action, b.Action) && maps.Equal(a.Bandwidth, b.Bandwidth) &&
		maps.Equal(a.ExternalIDs, b.ExternalIDs)
}

// sortedSet returns the sorted, de-duplicated copy of s.
func sortedSet(s []string) []string {
	out := slices.Clone(s)
	slices.Sort(out)
	return slices.Compact(out)
}

// setDiff returns the elements of a not in b (both any order), sorted.
func setDiff(a, b []string) []string {
	inB := make(map[string]bool, len(b))
	for _, x := range b {
		inB[x] = true
	}
	var out []string
	for _, x := range sortedSet(a) {
		if !inB[x] {
			out = append(out, x)
		}
	}
	return out
}
