// Package probe is hack/mutation.sh's test fixture: its one test fails
// whenever a seeded bug is compiled in, except the bug named by
// $PROBE_SPARE, which it lets through (an uncaught bug).
package probe

import (
	"os"
	"testing"

	"github.com/nqos/nqos/internal/seeded"
)

func TestProbe(t *testing.T) {
	if seeded.Active != seeded.None && string(seeded.Active) != os.Getenv("PROBE_SPARE") {
		t.Errorf("seeded bug %s is compiled in", seeded.Active)
	}
}
