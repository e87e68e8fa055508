package localnetenv

import (
	"testing"
	"time"

	"github.com/nqos/nqos/harness"
)

// An LSP the harness creates under the probe is the durations' origin;
// an LSP ovnkube created with the launcher pod, before the probe, makes
// the probe's start the origin and is reported as how much earlier.
func TestAppearOrigin(t *testing.T) {
	for _, tc := range []struct {
		name      string
		lspInNB   time.Duration
		origin    string
		lspBefore time.Duration
	}{
		{"harness creates the LSP", 11 * time.Millisecond, harness.OriginLSPCreated, 0},
		{"not seen", 0, harness.OriginLSPCreated, 0},
		{"ovnkube created it first", -385 * time.Millisecond, harness.OriginProbeStart, 385 * time.Millisecond},
	} {
		a := appearResult{LSP: "l", LSPInNB: tc.lspInNB, FirstMarked: time.Millisecond}.step()
		if a.Origin != tc.origin || a.LSPBefore != tc.lspBefore || a.FirstMarked != time.Millisecond {
			t.Errorf("%s: origin %q before %v first marked %v; want %q %v 1ms", tc.name, a.Origin, a.LSPBefore, a.FirstMarked, tc.origin, tc.lspBefore)
		}
	}
}
