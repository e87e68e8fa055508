package cplife

import (
	"maps"
	"slices"
	"strings"
)

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
