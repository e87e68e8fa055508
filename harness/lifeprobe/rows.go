package lifeprobe

import (
	"fmt"
	"slices"

	"github.com/nqos/nqos/internal/qos"
)

// NBDiff is the difference between the rows the compiler wants and the
// rows the Northbound has, each row as one canonical JSON line. A row
// present twice in the NB but once in the compile appears in Extra once.
type NBDiff struct {
	Missing []string `json:"missing"`
	Extra   []string `json:"extra"`
}

// Empty reports whether the two sides are identical.
func (d NBDiff) Empty() bool { return len(d.Missing) == 0 && len(d.Extra) == 0 }

func (d NBDiff) String() string {
	return fmt.Sprintf("%d missing %v, %d extra %v", len(d.Missing), d.Missing, len(d.Extra), d.Extra)
}

// DiffRows compares the port groups, address sets and QoS rows of want
// and got as multisets (orphans and duplicates show as Extra).
func DiffRows(want, got qos.Desired) NBDiff {
	w, g := want.RowLines(), got.RowLines()
	var d NBDiff
	for line, n := range w {
		for range n - g[line] {
			d.Missing = append(d.Missing, line)
		}
	}
	for line, n := range g {
		for range n - w[line] {
			d.Extra = append(d.Extra, line)
		}
	}
	slices.Sort(d.Missing)
	slices.Sort(d.Extra)
	return d
}
