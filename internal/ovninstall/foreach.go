package ovninstall

import (
	"fmt"
	"os"
	"testing"

	"github.com/nqos/nqos/internal/testenv"
)

// ForEach runs fn as one subtest per supported version ("ovn-23.03",
// "ovn-25.03") with that version's install in use: PATH and NQOS_OVN set
// for the subtest (so it must not be parallel), and the install's schemas
// in inst. A version not installed is a prerequisite missing
// (testenv.Check): skipped with the reason, a failure under CI=true.
func ForEach(t *testing.T, fn func(t *testing.T, inst Install)) {
	t.Helper()
	for _, v := range Versions() {
		t.Run("ovn-"+string(v), func(t *testing.T) {
			inst, err := Resolve(v)
			testenv.Check(t, fmt.Sprintf("OVN %s install", v), err)
			t.Setenv("PATH", inst.SearchPath(os.Getenv("PATH")))
			t.Setenv(EnvVar, string(v))
			fn(t, inst)
		})
	}
}
