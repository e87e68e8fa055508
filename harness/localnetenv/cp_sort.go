package localnetenv

import (
	"slices"
	"strings"

	"github.com/nqos/nqos/harness/lifeprobe"
)

// sortChanges orders row changes by table, then UUID.
func sortChanges(cs []lifeprobe.RowChange) {
	slices.SortFunc(cs, func(a, b lifeprobe.RowChange) int {
		if c := strings.Compare(a.Table, b.Table); c != 0 {
			return c
		}
		return strings.Compare(a.UUID, b.UUID)
	})
}
