package ovnnb

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/ovn-kubernetes/libovsdb/ovsdb"
)

// commitTimeout bounds how long a commit waits for its own changes to
// show up in the cache after the server accepted the transaction.
const commitTimeout = 10 * time.Second

// commit sends ops as one transaction, guarded by the leader fence when
// this Client took it (TakeFence), checks every operation result and
// waits until the cache holds the rows it inserted and lost the rows it
// deleted, so the next read (an idempotent re-Apply, the second teardown
// transaction) sees the committed state.
func (c *Client) commit(ctx context.Context, ops []ovsdb.Operation) error {
	return c.transact(ctx, ops, true)
}

// ErrRejected is wrapped by a commit the NB refused (a constraint or an
// operation error other than the fence).
var ErrRejected = errors.New("transaction rejected")

// ErrRowGone is wrapped by a commit whose update or mutate of a row by
// UUID matched no row: someone deleted it after the plan read it, so the
// transaction did not reach the wanted state.
var ErrRowGone = errors.New("row deleted meanwhile")

// transact is commit; guarded prepends the fence's wait when there is one.
func (c *Client) transact(ctx context.Context, ops []ovsdb.Operation, guarded bool) error {
	fenced := false
	if guarded {
		op, err := c.fenceOp()
		if err != nil {
			return err
		}
		if op != nil {
			ops = append([]ovsdb.Operation{*op}, ops...)
			fenced = true
		}
	}
	if c.comment != nil {
		// Last, so results[i] still belongs to ops[i] for the checks below.
		ops = append(ops[:len(ops):len(ops)], ovsdb.Operation{Op: ovsdb.OperationComment, Comment: c.comment})
	}
	results, err := c.cli.Transact(ctx, ops...)
	if err != nil {
		return fmt.Errorf("transact %d operations: %w", len(ops), err)
	}
	if opErrs, err := ovsdb.CheckOperationResults(results, ops); err != nil {
		if fenced && len(results) > 0 && results[0].Error != "" {
			return fmt.Errorf("transaction refused by the NB: %w (%s: %s)", ErrFenced, results[0].Error, results[0].Details)
		}
		return fmt.Errorf("%w: %w %v", ErrRejected, err, opErrs)
	}
	// An update or mutate of a row deleted after the plan read it
	// matches nothing, and OVSDB commits the rest: that is an error (the
	// caller's retry re-plans from the cache), reported once the cache
	// holds what did commit.
	gone := zeroCounts(ops, results)
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
	return errors.Join(gone, c.waitFor(wctx, "committed rows", func() bool {
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
	}))
}

// zeroCounts fails when an update or mutate by UUID matched no row.
func zeroCounts(ops []ovsdb.Operation, results []ovsdb.OperationResult) error {
	var gone []string
	for i, op := range ops {
		if op.Op != ovsdb.OperationUpdate && op.Op != ovsdb.OperationMutate {
			continue
		}
		if uuid, ok := whereUUID(op); ok && results[i].Count == 0 {
			gone = append(gone, op.Table+" "+uuid)
		}
	}
	if len(gone) > 0 {
		return fmt.Errorf("%w: %v matched no row", ErrRowGone, gone)
	}
	return nil
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
