package cplife

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"
)

// pollEvery calls check every interval until it reports done, fails, or
// timeout passes; the error names what was awaited. Checks that copy
// whole packet logs use a coarser interval than localnet.Poll's.
func pollEvery(ctx context.Context, timeout, interval time.Duration, what string, check func() (bool, error)) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	tick := time.NewTicker(interval)
	defer tick.Stop()
	for {
		done, err := check()
		if err != nil {
			return fmt.Errorf("waiting for %s: %w", what, err)
		}
		if done {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("waiting for %s: %w", what, ctx.Err())
		case <-tick.C:
		}
	}
}

// sortChanges orders row changes by table, then UUID.
func sortChanges(cs []RowChange) {
	slices.SortFunc(cs, func(a, b RowChange) int {
		if c := strings.Compare(a.Table, b.Table); c != 0 {
			return c
		}
		return strings.Compare(a.UUID, b.UUID)
	})
}

// sortedKeys returns m's keys in order.
func sortedKeys[V any](m map[string]V) []string { return slices.Sorted(maps.Keys(m)) }
