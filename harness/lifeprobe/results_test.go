package lifeprobe

import (
	"testing"
	"time"
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
		{"harness creates the LSP", 11 * time.Millisecond, OriginLSPCreated, 0},
		{"not seen", 0, OriginLSPCreated, 0},
		{"ovnkube created it first", -385 * time.Millisecond, OriginProbeStart, 385 * time.Millisecond},
	} {
		a := Appearance{LSP: "l", LSPInNB: tc.lspInNB}
		if a.Origin() != tc.origin || a.LSPBefore() != tc.lspBefore {
			t.Errorf("%s: origin %q before %v; want %q %v", tc.name, a.Origin(), a.LSPBefore(), tc.origin, tc.lspBefore)
		}
	}
}
