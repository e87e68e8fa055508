package localnetenv

import (
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
