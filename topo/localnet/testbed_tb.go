package localnet

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/nqos/nqos/internal/poll"
	"github.com/nqos/nqos/internal/testenv"
)

// requiredTools are the binaries a testbed runs.
var requiredTools = []string{"ovsdb-server", "ovs-vswitchd", "ovn-controller", "ovn-northd", "iperf3", "dnsmasq"}

// StartTB boots a testbed for a test or benchmark: it gates on root and
// the daemons' binaries (internal/testenv), holds the run ID's lock
// for the test's lifetime (a concurrent test process using the same ID,
// e.g. two `go test` runs of one package, waits instead of tearing this
// one down), removes a crashed earlier run of the same ID first, and
// registers a cleanup that collects logs and NB/SB dumps on failure and
// fails if anything is left behind.
func StartTB(t testing.TB, spec Spec) *Testbed {
	t.Helper()
	testenv.Root(t, "boots a real OVN testbed (namespaces, daemons)")
	testenv.Binaries(t, requiredTools...)
	lockRun(t, spec.RunID)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	if err := Down(ctx, spec.RunID); err != nil {
		t.Fatalf("removing an earlier run %s: %v", spec.RunID, err)
	}
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

// lockRun takes an exclusive flock on the run ID's lock file (next to,
// not in, the run directory, which Down removes), waiting while another
// process holds it. The kernel drops the lock when its holder dies, so a
// run of the ID that exists once the lock is ours is a crash's leftover.
// The lock is released after the testbed's own cleanup.
func lockRun(t testing.TB, runID string) {
	t.Helper()
	if err := ValidateRunID(runID); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(filepath.Dir(RunDir(runID)), filepath.Base(RunDir(runID))+".lock")
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		t.Fatalf("run %s: lock: %v", runID, err)
	}
	err = poll.Until(context.Background(), 8*time.Minute, 50*time.Millisecond, path+" (another test process uses run "+runID+")", func(context.Context) (bool, error) {
		err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB)
		if errors.Is(err, unix.EWOULDBLOCK) {
			return false, nil
		}
		return err == nil, err
	})
	if err != nil {
		f.Close()
		t.Fatalf("run %s: %v", runID, err)
	}
	t.Cleanup(func() { f.Close() })
}
