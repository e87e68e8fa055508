package harness

import (
	"testing"

	"github.com/nqos/nqos/scenarios"
)

// TestEveryStepKindIsRegistered runs over the built-in scenarios and the
// engine's test scenarios: every step kind they use has an entry.
func TestEveryStepKindIsRegistered(t *testing.T) {
	scs, err := scenarios.Resolve(nil)
	if err != nil {
		t.Fatal(err)
	}
	scs = append(scs, loadTestdata(t, "engine.yaml"))
	kinds := stepKinds()
	seen := map[string]bool{}
	for _, sc := range scs {
		for i := range sc.Steps {
			k := sc.Steps[i].Kind()
			if _, ok := kinds[k]; !ok {
				t.Errorf("%s steps[%d]: kind %q has no entry", sc.Name, i, k)
			}
			seen[k] = true
		}
	}
	for k := range kinds {
		if !seen[k] {
			t.Logf("kind %s is not used by any built-in scenario", k)
		}
	}
}
