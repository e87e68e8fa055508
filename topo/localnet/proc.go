package localnet

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// procStat is the part of /proc/<pid>/stat (or .../task/<tid>/stat)
// this package reads.
type procStat struct {
	state string // R, S, D, Z, X, ...
	ppid  int
	start uint64 // start time in clock ticks since boot
}

// readProcStat parses a stat file; the command name may hold spaces and
// parentheses, so fields are counted from the last ')'.
func readProcStat(path string) (procStat, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return procStat{}, err
	}
	s := string(raw)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return procStat{}, fmt.Errorf("%s: no command name", path)
	}
	// After ')': state(3) ppid(4) ... starttime(22).
	f := strings.Fields(s[i+1:])
	if len(f) < 20 {
		return procStat{}, fmt.Errorf("%s: %d fields", path, len(f))
	}
	ppid, err := strconv.Atoi(f[1])
	if err != nil {
		return procStat{}, fmt.Errorf("%s: ppid: %w", path, err)
	}
	start, err := strconv.ParseUint(f[19], 10, 64)
	if err != nil {
		return procStat{}, fmt.Errorf("%s: starttime: %w", path, err)
	}
	return procStat{state: f[0], ppid: ppid, start: start}, nil
}

// exited reports whether a task state is past the point where the task
// still holds anything (zombie or dead).
func exited(state string) bool { return state == "Z" || state == "X" || state == "x" }

// alive reports whether any thread of process pid still runs. Checking
// the leader alone is not enough: when a multi-threaded daemon
// (ovs-vswitchd, ovn-controller) is killed, its leader thread can be a
// zombie while other threads are still exiting, and those still share
// the process's files, so its pidfile lock and sockets are held until the
// last thread is gone.
func alive(pid int) bool {
	tasks, err := os.ReadDir(fmt.Sprintf("/proc/%d/task", pid))
	if err != nil {
		return false
	}
	for _, task := range tasks {
		st, err := readProcStat(fmt.Sprintf("/proc/%d/task/%s/stat", pid, task.Name()))
		if err == nil && !exited(st.state) {
			return true
		}
	}
	return false
}

// process is one process instance: pid plus start time, so a reused pid
// is not mistaken for the process that was stopped.
type process struct {
	pid   int
	start uint64
}

// findProcess identifies the process running as pid now; ok is false when
// there is none.
func findProcess(pid int) (p process, ok bool) {
	st, err := readProcStat(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return process{}, false
	}
	return process{pid: pid, start: st.start}, true
}

// gone reports whether p has fully exited: no thread of it runs any
// more (a zombie leader counts as gone) or the pid now belongs to a
// different process. A zombie whose parent is this process is reaped.
func (p process) gone() bool {
	st, err := readProcStat(fmt.Sprintf("/proc/%d/stat", p.pid))
	if err != nil || st.start != p.start {
		return true
	}
	if !alive(p.pid) {
		p.reap(st)
		return true
	}
	return false
}

// reap collects p's exit status if it is a zombie child of this process
// (daemons started with --detach never are: their parent is init).
func (p process) reap(st procStat) {
	if st.ppid != os.Getpid() || !exited(st.state) {
		return
	}
	var ws unix.WaitStatus
	_, _ = unix.Wait4(p.pid, &ws, unix.WNOHANG, nil)
}

// pidfileLocked reports whether some process holds a POSIX lock on
// pidfile, the way OVS daemons (ovsdb-server, ovs-vswitchd, ovn-northd,
// ovn-controller) guard theirs; a missing pidfile is unlocked.
func pidfileLocked(pidfile string) (bool, error) {
	f, err := os.Open(pidfile)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	defer f.Close()
	lk := unix.Flock_t{Type: unix.F_WRLCK, Whence: 0, Start: 0, Len: 0}
	if err := unix.FcntlFlock(f.Fd(), unix.F_GETLK, &lk); err != nil {
		return false, fmt.Errorf("pidfile %s: F_GETLK: %w", pidfile, err)
	}
	return lk.Type != unix.F_UNLCK, nil
}

// removeStalePidfile deletes pidfile if it still names pid: the process
// is gone, and a daemon that checks its pidfile with kill(pid, 0)
// (iperf3) would take a not yet reaped zombie for a running instance.
func removeStalePidfile(pidfile string, pid int) error {
	cur, err := readPid(pidfile)
	if errors.Is(err, fs.ErrNotExist) || (err == nil && cur != pid) {
		return nil
	}
	if err := os.Remove(pidfile); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("remove stale pidfile %s: %w", pidfile, err)
	}
	return nil
}
