package ovnnb

import (
	"context"
	"fmt"
	"sort"

	"github.com/ovn-kubernetes/libovsdb/ovsdb"

	"github.com/nqos/nqos/internal/ovnnb/nbdb"
	"github.com/nqos/nqos/internal/qos"
)

// legacySourceRuleIndex is the rule-index of upstream's source address sets.
const legacySourceRuleIndex = "src"

// probePortGroup is any valid port-group name; LegacyRows only needs to
// know whether a match has a legacy source fragment.
const probePortGroup = "a0"

// LegacyRow is an owned QoS row whose match still selects its source by
// address set (upstream's pre-OKEP-6815 form).
type LegacyRow struct {
	Key        Key
	RuleIndex  string
	UUID       string
	Match      string
	Switches   []string
	SourceSets []string
}

// MigrateResult reports what MigrateLegacy did.
type MigrateResult struct {
	// Rewritten is true when the row's match was rewritten by this call.
	Rewritten bool
	// NewMatch is the row's match after the call.
	NewMatch string
	// DeletedSets are the legacy source address sets deleted by this call.
	DeletedSets []string
	// MissingPorts are port-group members with no LSP yet (left out).
	MissingPorts []string
	// Transactions is how many transactions were committed (0..2).
	Transactions int
}

// LegacyRows lists the owned QoS rows still matching their source by
// address set, sorted by object, rule index and UUID. A failed read is
// an error, never an empty list.
func (c *Client) LegacyRows(ctx context.Context) ([]LegacyRow, error) {
	rs, sw, err := c.ownedView(ctx)
	if err != nil {
		return nil, fmt.Errorf("list legacy QoS rows: %w", err)
	}
	out := []LegacyRow{}
	for _, q := range rs.qos {
		_, sets, ok := qos.RewriteLegacyMatch(q.Match, probePortGroup)
		key, named := KeyFromOwnerName(q.ExternalIDs[qos.ObjectNameKey])
		if !ok || !named {
			continue
		}
		out = append(out, LegacyRow{Key: key, RuleIndex: q.ExternalIDs[qos.RuleIndexKey], UUID: q.UUID,
			Match: q.Match, Switches: append([]string{}, sw.refs[q.UUID]...), SourceSets: sets})
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.Key != b.Key {
			return a.Key.String() < b.Key.String()
		}
		if a.RuleIndex != b.RuleIndex {
			return a.RuleIndex < b.RuleIndex
		}
		return a.UUID < b.UUID
	})
	return out, nil
}

// MigrateLegacy moves one legacy row to port-group source matching.
// Transaction 1 ensures pg (with the ports present in the NB) and rewrites
// the row's match with qos.RewriteLegacyMatch, guarded by a wait on the
// old match; transaction 2, only after the first committed, deletes the
// row's NetworkQoS-owned source address sets (rule-index=src) that no QoS
// row references any more. Calling it again changes nothing.
func (c *Client) MigrateLegacy(ctx context.Context, row LegacyRow, pg qos.PortGroup) (MigrateResult, error) {
	b, err := c.MigrateLegacyBatch(ctx, []Migration{{Row: row, PortGroup: pg}})
	res := b.Results[row.UUID]
	res.Transactions = b.Transactions
	if err == nil {
		err = b.Failed[row.UUID]
	}
	return res, err
}

// migrationPlan plans transaction 1 for one row into p: ensure the port
// group (unless an earlier row of the same transaction did), rewrite the
// match.
func (c *Client) migrationPlan(ctx context.Context, p *planner, row LegacyRow, pg qos.PortGroup, pgPlanned bool, res *MigrateResult) error {
	cur := &nbdb.QoS{UUID: row.UUID}
	switch found, err := c.get(ctx, cur); {
	case err != nil:
		return fmt.Errorf("read row: %w", err)
	case !found:
		return fmt.Errorf("row not in NB")
	}
	if !ownedBy(cur.ExternalIDs, row.Key) {
		return fmt.Errorf("row is not owned by NetworkQoS %s (external_ids %v)", row.Key, cur.ExternalIDs)
	}
	if !pgPlanned {
		have, err := c.ownedBy(ctx, row.Key)
		if err != nil {
			return err
		}
		var existing nbdb.PortGroup
		existed := false
		for _, h := range have.pgs {
			if h.Name == pg.Name {
				existing, existed = h, true
			}
		}
		if err := p.portGroup(ctx, pg, existing, existed); err != nil {
			return err
		}
	}
	res.NewMatch = cur.Match
	newMatch, _, ok := qos.RewriteLegacyMatch(cur.Match, pg.Name)
	if !ok {
		return nil
	}
	zero := 0
	guard := &nbdb.QoS{UUID: cur.UUID, Match: cur.Match}
	waitOps, err := c.cli.Where(guard).Wait(ovsdb.WaitConditionEqual, &zero, guard, &guard.Match)
	if err != nil {
		return fmt.Errorf("wait on match: %w", err)
	}
	p.ops = append(p.ops, waitOps...)
	upd := &nbdb.QoS{UUID: cur.UUID, Match: newMatch}
	if err := p.update(upd, "QoS match", &upd.Match); err != nil {
		return err
	}
	res.Rewritten, res.NewMatch = true, newMatch
	return nil
}

// unusedLegacySets are the row's source sets that still exist, are legacy
// source sets (rule-index=src) owned by the row's NetworkQoS, and that no
// QoS match references.
func (c *Client) unusedLegacySets(ctx context.Context, row LegacyRow) ([]nbdb.AddressSet, error) {
	var all []nbdb.QoS
	if err := c.cli.List(ctx, &all); err != nil {
		return nil, fmt.Errorf("list QoS: %w", err)
	}
	if err := c.fresh(ctx); err != nil {
		return nil, fmt.Errorf("list QoS: %w", err)
	}
	used := map[string]bool{}
	for _, q := range all {
		for _, r := range MatchRefs(q.Match) {
			if r.Sigil == "$" {
				used[r.Name] = true
			}
		}
	}
	var out []nbdb.AddressSet
	for _, name := range sortedSet(row.SourceSets) {
		if used[name] {
			continue
		}
		as := &nbdb.AddressSet{Name: name}
		found, err := c.get(ctx, as)
		if err != nil {
			return nil, fmt.Errorf("look up address set %s: %w", name, err)
		}
		if !found {
			continue
		}
		if ownedBy(as.ExternalIDs, row.Key) && as.ExternalIDs[qos.RuleIndexKey] == legacySourceRuleIndex {
			out = append(out, *as)
		}
	}
	return out, nil
}
