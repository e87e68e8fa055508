package ovnnb_test

import (
	"errors"
	"log/slog"
	"strings"
	"testing"

	"github.com/ovn-kubernetes/libovsdb/ovsdb"

	"github.com/nqos/nqos/internal/ovnnb"
	"github.com/nqos/nqos/internal/ovnnb/nbdb"
)

// A client that took the fence writes; once another client takes it, the
// NB refuses every transaction of the first (ErrFenced) and its rows stay
// as the new leader left them; a fence row nqos did not create is never
// taken over.
func TestFenceRefusesDeposedLeader(t *testing.T) {
	f := newFixture(t, "p1", "p2")
	old := f.C
	if err := old.TakeFence(f.Ctx, "replica-a"); err != nil {
		t.Fatalf("TakeFence(replica-a): %v", err)
	}
	key, v1 := f.ApplyGold("ns1")

	next, err := ovnnb.Dial(f.Ctx, f.Srv.Addr(), slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(next.Close)
	if err := next.TakeFence(f.Ctx, "replica-b"); err != nil {
		t.Fatalf("TakeFence(replica-b): %v", err)
	}
	if h, err := next.FenceHolder(f.Ctx); err != nil || h != "replica-b" {
		t.Fatalf("FenceHolder = %q, %v; want replica-b", h, err)
	}
	v2 := object(key, 60, []string{"p1", "p2"}, rule{DSCP: 10})
	if _, err := old.Apply(f.Ctx, key, v2); !errors.Is(err, ovnnb.ErrFenced) {
		t.Fatalf("deposed leader's Apply: err = %v, want ErrFenced", err)
	}
	if err := old.Teardown(f.Ctx, key); !errors.Is(err, ovnnb.ErrFenced) {
		t.Fatalf("deposed leader's Teardown: err = %v, want ErrFenced", err)
	}
	f.requireApplied(key, v1)
	if _, err := next.Apply(f.Ctx, key, v2); err != nil {
		t.Fatalf("new leader's Apply: %v", err)
	}
	f.requireApplied(key, v2)

	other := newFixture(t)
	other.Srv.MustNBCtl("create", "Address_Set", "name="+ovnnb.FenceName, "external_ids:owner=someone-else")
	// Until the client's cache has the row, the insert fails on the
	// name index; then TakeFence refuses by reading it. Never a success.
	other.waitUntil("TakeFence refusing a foreign fence row", func() bool {
		err := other.C.TakeFence(other.Ctx, "replica-a")
		if err == nil {
			t.Fatal("TakeFence over a foreign row succeeded")
		}
		return strings.Contains(err.Error(), "not nqos's")
	})
}

// An update or mutate of a row deleted after the plan read it matches no
// row; OVSDB commits it with count 0, and commit reports ErrRowGone
// instead of success.
func TestUpdateOfDeletedRowFails(t *testing.T) {
	f := newFixture(t)
	gone := ovsdb.UUID{GoUUID: "6f1d2c4e-1b7a-4d55-9a1e-3c2b1a0f9e8d"}
	where := []ovsdb.Condition{{Column: "_uuid", Function: ovsdb.ConditionEqual, Value: gone}}
	for _, op := range []ovsdb.Operation{
		{Op: ovsdb.OperationUpdate, Table: nbdb.QoSTable, Where: where, Row: ovsdb.Row{"match": "ip4"}},
		{Op: ovsdb.OperationMutate, Table: nbdb.PortGroupTable, Where: where,
			Mutations: []ovsdb.Mutation{{Column: "ports", Mutator: ovsdb.MutateOperationDelete, Value: ovsdb.OvsSet{GoSet: []any{gone}}}}},
	} {
		if err := f.C.Commit(f.Ctx, []ovsdb.Operation{op}); !errors.Is(err, ovnnb.ErrRowGone) {
			t.Errorf("%s of a missing %s row: err = %v, want ErrRowGone", op.Op, op.Table, err)
		}
	}
}
