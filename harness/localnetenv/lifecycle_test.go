package localnetenv

import (
	"strings"
	"testing"
	"time"

	"github.com/nqos/nqos/harness/results"
)

// TestLifecycleStepsOnTestbed runs the lifecycle scenarios on the real
// testbed: each passes (runOnTestbed) and every lifecycle step reports its
// measured figures, within physical bounds.
func TestLifecycleStepsOnTestbed(t *testing.T) {
	requireTestbed(t)
	t.Run("vm-after-policy", func(t *testing.T) {
		st := stepOfKind(t, runOnTestbed(t, "vm-after-policy"), "startVM")
		join := measureNamed(t, st, "in its port groups")
		if join.Duration <= 0 || join.Duration > 5*time.Second {
			t.Errorf("LSP creation -> port-group membership %v, want within (0, 5s]", join.Duration)
		}
	})
	t.Run("vm-lifecycle", func(t *testing.T) {
		s := runOnTestbed(t, "vm-lifecycle")
		for _, kind := range []string{"migrate", "restartLauncher"} {
			st := stepOfKind(t, s, kind)
			if lost := measureNamed(t, st, "lost guest → peer"); lost.Unit != "datagrams" {
				t.Errorf("%s: loss measure %+v, want a datagram count", kind, lost)
			}
			if st.Detail == nil {
				t.Errorf("%s: no detail", kind)
			}
		}
		seen := measureNamed(t, stepOfKind(t, s, "migrate"), "seen on the uplinks")
		if seen.Count < 200 {
			t.Errorf("migration probe: %d packets seen on the uplinks, want >= 200", seen.Count)
		}
	})
}

func stepOfKind(t *testing.T, s results.Scenario, kind string) results.Step {
	t.Helper()
	for _, st := range s.Steps {
		if st.Kind == kind {
			return st
		}
	}
	t.Fatalf("scenario %s has no %s step", s.Name, kind)
	return results.Step{}
}

func measureNamed(t *testing.T, st results.Step, part string) results.Measure {
	t.Helper()
	for _, m := range st.Measures {
		if strings.Contains(m.Name, part) {
			return m
		}
	}
	t.Fatalf("step %d %s: no measure %q in %+v", st.Index, st.Kind, part, st.Measures)
	return results.Measure{}
}
