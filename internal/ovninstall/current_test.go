package ovninstall

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/nqos/nqos/internal/testenv"
)

// TestCurrent runs each real install's ovn-northd: the selected version is
// detected from the binaries, and a PATH that does not match the selection
// is refused with the program named.
func TestCurrent(t *testing.T) {
	ForEach(t, func(t *testing.T, inst Install) {
		ctx := context.Background()
		got, release, err := Current(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if got != inst || !strings.HasPrefix(release, string(inst.Version)+".") {
			t.Fatalf("Current = %+v, %q; want %+v, %s.*", got, release, inst, inst.Version)
		}
		if d, err := Detect(ctx); err != nil || d != release {
			t.Fatalf("Detect = %q, %v; want %q", d, err, release)
		}
		// The same PATH with the other version selected.
		other := V2503
		if inst.Version == V2503 {
			other = V2303
		}
		oi, err := Resolve(other)
		testenv.Check(t, "OVN "+string(other)+" install", err)
		t.Setenv(EnvVar, string(oi.Version))
		if _, _, err := Current(ctx); err == nil || !strings.Contains(err.Error(), "on PATH is") {
			t.Fatalf("%s selected with %s's PATH %s: Current error = %v, want a PATH mismatch", other, inst.Version, os.Getenv("PATH"), err)
		}
	})
}
