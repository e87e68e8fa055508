package localnetenv

import (
	"testing"
	"time"
)

// TestAdversarialStepsOnTestbed runs the spoofing and churn scenarios on
// the real testbed: each passes (runOnTestbed: every step, no leftovers)
// and the steps report their measured figures within physical bounds.
// The probed startVM and OVN baseline run in vm-after-policy
// (TestLifecycleStepsOnTestbed runs it; here its adversarial figures).
func TestAdversarialStepsOnTestbed(t *testing.T) {
	requireTestbed(t)
	t.Run("spoofing", func(t *testing.T) {
		st := stepOfKind(t, runOnTestbed(t, "spoofing"), "spoof")
		if m := measureNamed(t, st, "spoofer-victim-ip"); m.Count < 500 {
			t.Errorf("forged-IP frames seen %d, want >= 500 (policed at 10 Mbit/s for 1 s)", m.Count)
		}
		if m := measureNamed(t, st, "spoofer-victim-mac"); m.Count != 0 {
			t.Errorf("forged-MAC frames seen %d, want 0", m.Count)
		}
	})
	t.Run("churn", func(t *testing.T) {
		st := stepOfKind(t, runOnTestbed(t, "churn"), "churn")
		if ops, audited := measureNamed(t, st, "operations"), measureNamed(t, st, "NB states audited"); ops.Count < 75 || audited.Count < ops.Count/2 {
			t.Errorf("%d operations, %d NB states audited: want >= 75 and at least half as many states", ops.Count, audited.Count)
		}
		if conv := measureNamed(t, st, "restore →"); conv.Duration <= 0 || conv.Duration > 30*time.Second {
			t.Errorf("restore -> converged %v, want within (0, 30s]", conv.Duration)
		}
		if conv := measureNamed(t, st, "churn end →"); conv.Duration <= 0 || conv.Duration > 30*time.Second {
			t.Errorf("churn end -> converged %v, want within (0, 30s]", conv.Duration)
		}
		starts, stops := measureNamed(t, st, "late VMs started"), measureNamed(t, st, "late VMs stopped")
		if starts.Count < 1 || stops.Count < 1 || stops.Count > starts.Count {
			t.Errorf("late VMs started %d, stopped %d: want at least one each, no more stops than starts", starts.Count, stops.Count)
		}
		if m := measureNamed(t, st, "longest late VM start"); m.Duration <= 0 || m.Duration > 5*time.Second {
			t.Errorf("longest late VM start %v, want within (0, 5s]", m.Duration)
		}
	})
	t.Run("vm-after-policy", func(t *testing.T) {
		s := runOnTestbed(t, "vm-after-policy")
		base := measureNamed(t, stepOfKind(t, s, "ovnBaseline"), "(median)")
		if base.Duration <= 0 || base.Duration > 2*time.Second {
			t.Errorf("OVN's own port-group change %v, want within (0, 2s]", base.Duration)
		}
		for _, st := range s.Steps {
			if st.Kind == "startVM" && len(st.Measures) > 2 {
				if m := measureNamed(t, st, "first marked packet on the uplink"); m.Duration <= 0 {
					t.Errorf("LSP created -> first marked %v, want > 0", m.Duration)
				}
				return
			}
		}
		t.Error("no startVM step under a probe")
	})
}
