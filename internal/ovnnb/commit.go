package ovnnb

import (
	"context"
	"fmt"
	"time"

	"github.com/ovn-kubernetes/libovsdb/ovsdb"
)

// commitTimeout bounds how long a commit waits for its own changes to
// show up in the cache after the server accepted the transaction.
const commitTimeout = 10 * time.Second

// commit sends ops as one transaction, checks every operation result and
// waits until the cache holds the rows it inserted and lost the rows it
// deleted, so the next read (an idempotent re-Apply, the second teardown
// transaction) sees the committed state.
func (c *Client) commit(ctx context.Context, ops []ovsdb.Operation) error {
	if c.comment != nil {
		// Last, so results[i] still belongs to ops[i] for the checks below.
		ops = append(ops[:len(ops):len(ops)], ovsdb.Operation{Op: ovsdb.OperationComment, Comment: c.comment})
	}
	results, err := c.cli.Transact(ctx, ops...)
	if err != nil {
		return fmt.Errorf("transact %d operations: %w", len(ops), err)
	}
	if opErrs, err := ovsdb.CheckOperationResults(results, ops); err != nil {
		return fmt.Errorf("transaction rejected: %w %v", err, opErrs)
	}
	type rowRef struct{ table, uuid string }
	var inserted, deleted []rowRef
	for i, op := range ops {
		switch op.Op {
		case ovsdb.OperationInsert:
			inserted = append(inserted, rowRef{op.Table, results[i].UUID.GoUUID})
		case ovsdb.OperationDelete:
			if uuid, ok := whereUUID(op); ok {
				deleted = append(deleted, rowRef{op.Table, uuid})
			}
		}
	}
	wctx, cancel := context.WithTimeout(ctx, commitTimeout)
	defer cancel()
	return c.waitFor(wctx, "committed rows", func() bool {
		tc := c.cli.Cache()
		for _, r := range inserted {
			if t := tc.Table(r.table); t == nil || !t.HasRow(r.uuid) {
				return false
			}
		}
		for _, r := range deleted {
			if t := tc.Table(r.table); t != nil && t.HasRow(r.uuid) {
				return false
			}
		}
		return true
	})
}

// whereUUID extracts X from an operation whose only condition is
// `_uuid == X`.
func whereUUID(op ovsdb.Operation) (string, bool) {
	if len(op.Where) != 1 || op.Where[0].Column != "_uuid" || op.Where[0].Function != ovsdb.ConditionEqual {
		return "", false
	}
	u, ok := op.Where[0].Value.(ovsdb.UUID)
	return u.GoUUID, ok
}
