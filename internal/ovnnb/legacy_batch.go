package ovnnb

import (
	"context"
	"fmt"

	"github.com/nqos/nqos/internal/ovnnb/nbdb"
	"github.com/nqos/nqos/internal/qos"
)

// Migration is one legacy row and the port group replacing its source.
type Migration struct {
	Row       LegacyRow
	PortGroup qos.PortGroup
}

// MigrateBatchResult tells what MigrateLegacyBatch did per row, by
// legacy row UUID (a row's Transactions is not set).
type MigrateBatchResult = Outcome[string, MigrateResult]

// MigrateLegacyBatch migrates many legacy rows as MigrateLegacy does one,
// MaxBatchObjects rows at a time and in MigrateLegacy's order: per chunk
// transaction 1 ensures every port group and rewrites every match, and
// only after it committed transaction 2 deletes the legacy source sets
// no QoS row references any more. A row that cannot be planned is left
// out and named in Failed; a failed transaction is the error.
func (c *Client) MigrateLegacyBatch(ctx context.Context, ms []Migration) (MigrateBatchResult, error) {
	res := newOutcome[string, MigrateResult]()
	for start := 0; start < len(ms); start += MaxBatchObjects {
		if err := c.migrateChunk(ctx, ms[start:min(start+MaxBatchObjects, len(ms))], &res); err != nil {
			return res, err
		}
	}
	return res, nil
}

func (c *Client) migrateChunk(ctx context.Context, ms []Migration, res *MigrateBatchResult) error {
	sw, err := c.switchIndex(ctx)
	if err != nil {
		return fmt.Errorf("migrate legacy rows: %w", err)
	}
	named := new(int)
	tx1 := c.plannerOn(Key{}, sw, named)
	planned := map[string]bool{} // port groups ensured by tx1
	var keys []Key
	var ok []Migration
	for _, m := range ms {
		var r MigrateResult
		if err := c.planMigration(ctx, tx1, m, planned, &r, named); err != nil {
			res.Failed[m.Row.UUID] = err
			continue
		}
		res.Results[m.Row.UUID] = r
		ok = append(ok, m)
		keys = append(keys, m.Row.Key)
	}
	if len(ok) == 0 {
		return nil
	}
	who := "NetworkQoS " + keyList(keys)
	if ops := tx1.operations(); len(ops) > 0 {
		if err := c.commit(ctx, ops); err != nil {
			return fmt.Errorf("%s: migrate legacy QoS rows: %w", who, err)
		}
		res.Transactions++
	}
	// Transaction 2 reads the cache after transaction 1 committed.
	tx2 := c.plannerOn(Key{}, sw, named)
	deleted := map[string]bool{}
	for _, m := range ok {
		unused, err := c.unusedLegacySets(ctx, m.Row)
		if err != nil {
			return fmt.Errorf("NetworkQoS %s: migrate QoS %s: %w", m.Row.Key, m.Row.UUID, err)
		}
		r := res.Results[m.Row.UUID]
		for _, as := range unused {
			if deleted[as.UUID] {
				continue
			}
			deleted[as.UUID] = true
			if err := tx2.deleteRow(&nbdb.AddressSet{UUID: as.UUID}); err != nil {
				return fmt.Errorf("NetworkQoS %s: delete legacy address set %s: %w", m.Row.Key, as.Name, err)
			}
			r.DeletedSets = append(r.DeletedSets, as.Name)
		}
		res.Results[m.Row.UUID] = r
	}
	if len(tx2.deleteNamed) == 0 {
		return nil
	}
	if err := c.commit(ctx, tx2.deleteNamed); err != nil {
		return fmt.Errorf("%s: delete legacy address sets: %w", who, err)
	}
	res.Transactions++
	return nil
}

// planMigration plans one row's part of transaction 1 into tx1.
func (c *Client) planMigration(ctx context.Context, tx1 *planner, m Migration, planned map[string]bool, r *MigrateResult, named *int) error {
	row, pg := m.Row, m.PortGroup
	if err := checkNamed(row.Key, "port group", 0, pg.Name, pg.ExternalIDs, map[string]bool{}); err != nil {
		return fmt.Errorf("migrate QoS %s: %w", row.UUID, err)
	}
	p := c.plannerOn(row.Key, tx1.sw, named)
	if err := c.migrationPlan(ctx, p, row, pg, planned[pg.Name], r); err != nil {
		return fmt.Errorf("NetworkQoS %s: migrate QoS %s: %w", row.Key, row.UUID, err)
	}
	planned[pg.Name] = true
	r.MissingPorts = sortedKeys(p.missingPorts)
	tx1.absorb(p)
	return nil
}
