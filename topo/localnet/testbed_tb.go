package localnet

import (
	"context"
	"os/exec"
	"testing"
	"time"
)

// RequiredTools are the binaries a testbed runs.
var requiredTools = []string{"ovsdb-server", "ovs-vswitchd", "ovn-controller", "ovn-northd", "iperf3", "ethtool", "dnsmasq"}

// StartTB boots a testbed for a test or benchmark: it skips (naming the
// package to install) when a binary is missing, removes a crashed earlier
// run of the same ID first, and registers a cleanup that collects logs
// and NB/SB dumps on failure and fails if anything is left behind.
func StartTB(t testing.TB, spec Spec) *Testbed {
	t.Helper()
	for _, b := range requiredTools {
		if _, err := exec.LookPath(b); err != nil {
			t.Skipf("%s not installed: the testbed needs openvswitch-switch, ovn-central, ovn-host, iperf3, ethtool, dnsmasq-base", b)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	_ = Down(ctx, spec.RunID)
	tb, err := Up(ctx, spec)
	if err != nil {
		t.Fatalf("Up: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if t.Failed() {
			dir := t.TempDir()
			if err := tb.Collect(ctx, dir); err == nil {
				t.Logf("logs and NB/SB dumps in %s", dir)
			}
		}
		if err := tb.CloseVerified(ctx); err != nil {
			t.Error(err)
		}
	})
	return tb
}
