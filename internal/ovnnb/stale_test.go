package ovnnb_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/nqos/nqos/internal/ovnnb"
	"github.com/nqos/nqos/internal/poll"
)

// TestReadsFailWhileNBDown: with the NB ovsdb-server stopped, a wait for
// "no owned rows" (as a scenario's noOwnedRows check polls) ends with the
// read error, naming the NB and the cause, instead of passing or timing
// out on the last known state; every other read fails the same way. After
// a restart the same reads succeed again.
func TestReadsFailWhileNBDown(t *testing.T) {
	f := newFixture(t, "p1")
	key, _ := f.ApplyGold("ns1")
	if err := f.C.Teardown(f.Ctx, key); err != nil {
		t.Fatalf("Teardown: %v", err)
	}
	f.Srv.Stop()

	err := poll.Until(f.Ctx, 30*time.Second, 0, "no owned NB rows", func(ctx context.Context) (bool, error) {
		rows, err := f.C.Rows(ctx)
		if err != nil {
			return false, err
		}
		return len(rows.QoS)+len(rows.PortGroups)+len(rows.AddressSets) == 0, nil
	})
	if !errors.Is(err, ovnnb.ErrStaleCache) || errors.Is(err, poll.ErrTimeout) {
		t.Fatalf("noOwnedRows wait with the NB down = %v, want the stale-cache read error", err)
	}
	t.Logf("noOwnedRows wait with the NB down: %v", err)
	for name, read := range map[string]func() error{
		"OwnedKeys":  func() error { _, err := f.C.OwnedKeys(f.Ctx); return err },
		"LegacyRows": func() error { _, err := f.C.LegacyRows(f.Ctx); return err },
		"Tables":     func() error { _, err := f.C.Tables(f.Ctx); return err },
	} {
		if err := read(); !errors.Is(err, ovnnb.ErrStaleCache) {
			t.Errorf("%s with the NB down = %v, want ErrStaleCache", name, err)
		}
	}

	f.Srv.Restart()
	f.waitUntil("reads to succeed after the restart", func() bool {
		_, err := f.C.Rows(f.Ctx)
		return err == nil
	})
	if keys := f.ownedKeys(); len(keys) != 0 {
		t.Fatalf("OwnedKeys after restart = %v, want none", keys)
	}
}
