package ovnnb

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"maps"

	"github.com/ovn-kubernetes/libovsdb/ovsdb"

	"github.com/nqos/nqos/internal/ovnnb/nbdb"
)

// The leader fence: an empty Address_Set nqos creates and owns, named
// FenceName, whose external_ids hold the token of the replica that leads.
// A replica that takes the leadership writes a fresh token; from then on
// every transaction of its Client starts with an OVSDB wait that the row
// still holds that token, so the Northbound itself refuses the
// transactions of a replica that was deposed (paused, cut off) after a
// new leader took over. The set is referenced by nothing, so OVN derives
// no flows from it.
const (
	FenceName       = "nqos_leader_fence"
	fenceMarkKey    = "nqos.ovn.org/fence"
	fenceMarkValue  = "leader"
	fenceHolderKey  = "nqos.ovn.org/holder"
	fenceTokenKey   = "nqos.ovn.org/token"
	fenceTokenBytes = 16
)

// ErrFenced is wrapped by every write refused because another replica
// took the leadership (the fence row no longer holds this Client's token).
var ErrFenced = errors.New("fenced: another replica holds the NB leadership")

// TakeFence makes this Client the fenced leader: it writes a fresh token
// for holder into the fence row (creating it when absent), so that every
// earlier leader's transactions fail, and guards every later transaction
// of this Client with it. A fence row nqos did not create is an error,
// never overwritten.
func (c *Client) TakeFence(ctx context.Context, holder string) error {
	b := make([]byte, fenceTokenBytes)
	if _, err := rand.Read(b); err != nil {
		return fmt.Errorf("NB fence: token: %w", err)
	}
	ids := map[string]string{fenceMarkKey: fenceMarkValue, fenceHolderKey: holder, fenceTokenKey: hex.EncodeToString(b)}
	cur := &nbdb.AddressSet{Name: FenceName}
	found, err := c.get(ctx, cur)
	if err != nil {
		return fmt.Errorf("NB fence %s: read: %w", FenceName, err)
	}
	idsMap, err := ovsdb.NewOvsMap(ids)
	if err != nil {
		return fmt.Errorf("NB fence: %w", err)
	}
	var op ovsdb.Operation
	switch {
	case !found:
		op = ovsdb.Operation{Op: ovsdb.OperationInsert, Table: nbdb.AddressSetTable,
			Row: ovsdb.Row{"name": FenceName, "external_ids": idsMap}}
	case cur.ExternalIDs[fenceMarkKey] != fenceMarkValue:
		return fmt.Errorf("NB fence: Address_Set %s exists and is not nqos's (external_ids %v): not taking it", FenceName, cur.ExternalIDs)
	default:
		op = ovsdb.Operation{Op: ovsdb.OperationUpdate, Table: nbdb.AddressSetTable,
			Where: []ovsdb.Condition{{Column: "_uuid", Function: ovsdb.ConditionEqual, Value: ovsdb.UUID{GoUUID: cur.UUID}}},
			Row:   ovsdb.Row{"external_ids": idsMap}}
	}
	if err := c.transact(ctx, []ovsdb.Operation{op}, false); err != nil {
		return fmt.Errorf("NB fence %s: take for %s: %w", FenceName, holder, err)
	}
	c.mu.Lock()
	c.fence = ids
	c.mu.Unlock()
	return nil
}

// fenceOp is the wait that guards a transaction, nil without a fence.
func (c *Client) fenceOp() (*ovsdb.Operation, error) {
	c.mu.Lock()
	ids := maps.Clone(c.fence)
	c.mu.Unlock()
	if ids == nil {
		return nil, nil
	}
	m, err := ovsdb.NewOvsMap(ids)
	if err != nil {
		return nil, fmt.Errorf("NB fence: %w", err)
	}
	zero := 0
	return &ovsdb.Operation{Op: ovsdb.OperationWait, Table: nbdb.AddressSetTable, Timeout: &zero,
		Where:   []ovsdb.Condition{{Column: "name", Function: ovsdb.ConditionEqual, Value: FenceName}},
		Columns: []string{"external_ids"}, Until: string(ovsdb.ConditionEqual),
		Rows: []ovsdb.Row{{"external_ids": m}}}, nil
}

// FenceHolder reads the holder named in the fence row ("" when there is
// none).
func (c *Client) FenceHolder(ctx context.Context) (string, error) {
	cur := &nbdb.AddressSet{Name: FenceName}
	found, err := c.get(ctx, cur)
	if err != nil || !found {
		return "", err
	}
	return cur.ExternalIDs[fenceHolderKey], nil
}
