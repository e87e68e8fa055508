package localnetenv

import (
	"testing"
	"time"
)

// TestControllerStepsOnTestbed runs the controller scenarios on the real
// testbed with a controller binary this test builds: both pass
// (runOnTestbed), every restart reports its kill point and readiness,
// and the upgrade reports the migration's transactions in order.
func TestControllerStepsOnTestbed(t *testing.T) {
	requireTestbed(t)
	t.Run("controller-restart", func(t *testing.T) {
		s := runOnTestbed(t, "controller-restart")
		kills := 0
		for _, st := range s.Steps {
			if st.Kind != "restartController" {
				continue
			}
			ready := measureNamed(t, st, "controller ready (synced)")
			if ready.Duration <= 0 || ready.Duration > syncTimeout {
				t.Errorf("step %d: stop → ready %v, want within (0, %v]", st.Index, ready.Duration, syncTimeout)
			}
			if measureNamed(t, st, "kill point").Count > 0 {
				kills++
			}
		}
		if kills != 3 {
			t.Errorf("%d restarts after a burst transaction, want 3", kills)
		}
	})
	t.Run("upgrade", func(t *testing.T) {
		st := stepOfKind(t, runOnTestbed(t, "upgrade"), "upgrade")
		inserted := measureNamed(t, st, "port group inserted")
		deleted := measureNamed(t, st, "legacy address set deleted")
		if inserted.Duration <= 0 || deleted.Duration < inserted.Duration || deleted.Duration > syncTimeout+time.Second {
			t.Errorf("port group inserted at %v, legacy set deleted at %v after the controller start: want 0 < inserted <= deleted", inserted.Duration, deleted.Duration)
		}
	})
}
