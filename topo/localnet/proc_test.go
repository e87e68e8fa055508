package localnet

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/nqos/nqos/internal/poll"
	"github.com/nqos/nqos/internal/testenv"
)

// lockHolder is a process in the state that made a restart flaky: it
// writes its pid to the pidfile, locks it the way OVS daemons do, starts
// a second thread, and then its leader thread alone exits (SYS_exit, not
// exit_group). The leader is a zombie while the other thread still holds
// the lock, exactly like a SIGKILLed ovs-vswitchd whose leader finished
// exiting before its handler threads.
const lockHolder = `
import ctypes, fcntl, os, sys, threading, time
f = open(sys.argv[1], "w")
fcntl.lockf(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
f.write(str(os.getpid())); f.flush()
def hold():
    while True:
        time.sleep(3600)
threading.Thread(target=hold, daemon=True).start()
ctypes.CDLL(None, use_errno=True).syscall(int(sys.argv[2]), 0)
`

// startLockHolder runs lockHolder and waits until its leader is a zombie
// and the pidfile is locked.
func startLockHolder(t *testing.T, pidfile string) int {
	t.Helper()
	testenv.Binaries(t, "python3")
	cmd := exec.Command("python3", "-c", lockHolder, pidfile, strconv.Itoa(unix.SYS_EXIT))
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pid := cmd.Process.Pid
	waited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(waited) }()
	t.Cleanup(func() {
		_ = unix.Kill(pid, unix.SIGKILL)
		<-waited
	})
	err := poll.Until(context.Background(), 20*time.Second, pollEvery, "helper leader zombie with the pidfile locked", func(context.Context) (bool, error) {
		st, err := readProcStat(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil {
			return false, err
		}
		locked, err := pidfileLocked(pidfile)
		return st.state == "Z" && locked, err
	})
	if err != nil {
		t.Fatal(err)
	}
	return pid
}

// TestStopWaitsForEveryThread: stopDaemon returns only when no thread of
// the old process runs, its pidfile lock is released and the stale
// pidfile is gone, in both modes.
func TestStopWaitsForEveryThread(t *testing.T) {
	for _, mode := range []RestartMode{RestartKill, RestartGraceful} {
		t.Run(string(mode), func(t *testing.T) {
			pidfile := filepath.Join(t.TempDir(), "holder.pid")
			pid := startLockHolder(t, pidfile)
			if !alive(pid) {
				t.Fatalf("pid %d with a zombie leader and a running thread reported not alive", pid)
			}
			d := daemonState{Node: "test", Name: "holder", Pidfile: pidfile}
			if err := stopDaemon(context.Background(), d, mode); err != nil {
				t.Fatal(err)
			}
			if alive(pid) {
				t.Errorf("pid %d still has a running thread after stop", pid)
			}
			if locked, err := pidfileLocked(pidfile); err != nil || locked {
				t.Errorf("pidfile locked %v (%v) after stop", locked, err)
			}
			if _, err := os.Stat(pidfile); !errors.Is(err, fs.ErrNotExist) {
				t.Errorf("stale pidfile after stop: %v", err)
			}
		})
	}
}

// TestRemoveStalePidfile: a stop removes the pidfile of the stopped pid
// (or an unreadable one) but never one naming a different pid.
func TestRemoveStalePidfile(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		content string
		pid     int
		kept    bool
	}{{"123\n", 123, false}, {"456\n", 123, true}, {"garbage", 123, false}} {
		p := filepath.Join(dir, "x.pid")
		if err := os.WriteFile(p, []byte(tc.content), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := removeStalePidfile(p, tc.pid); err != nil {
			t.Fatal(err)
		}
		_, err := os.Stat(p)
		if kept := err == nil; kept != tc.kept {
			t.Errorf("pidfile %q, stopped pid %d: kept %v, want %v", tc.content, tc.pid, kept, tc.kept)
		}
	}
}
