package localnet

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/nqos/nqos/internal/poll"
)

// RestartMode is how RestartDaemon stops a daemon.
type RestartMode string

// Restart modes.
const (
	RestartKill     RestartMode = "kill"     // SIGKILL
	RestartGraceful RestartMode = "graceful" // SIGTERM, wait for exit
)

// startDaemon runs a detached daemon (the OVS daemons' --detach makes
// the command return only once the daemon is initialised) and waits
// until its pidfile names a running process other than old (0: none):
// iperf3 -D and dnsmasq write theirs after the command returned.
func (r runner) startDaemon(ctx context.Context, d daemonState, old int) error {
	if _, err := r.run(ctx, d.Netns, d.Env, d.Argv...); err != nil {
		return fmt.Errorf("start %s %s: %w (log %s)", d.Node, d.Name, err, d.Log)
	}
	what := fmt.Sprintf("%s %s to write its pidfile (log %s)", d.Node, d.Name, d.Log)
	return poll.Until(ctx, stopTimeout, pollEvery, what, func(context.Context) (bool, error) {
		pid, err := readPid(d.Pidfile)
		return err == nil && pid != old && alive(pid), nil
	})
}

// readPid returns the pid in a pidfile.
func readPid(pidfile string) (int, error) {
	raw, err := os.ReadFile(pidfile)
	if err != nil {
		return 0, err
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(raw)))
	if err != nil {
		return 0, fmt.Errorf("pidfile %s: %w", pidfile, err)
	}
	return pid, nil
}

// stopDaemon signals the daemon in its pidfile and waits until it can be
// started again: every thread of the old process has exited (a killed
// multi-threaded daemon's leader is a zombie before its other threads
// are done) and its pidfile lock is released. A stale pidfile naming the
// old pid is then removed.
func stopDaemon(ctx context.Context, d daemonState, mode RestartMode) error {
	pid, err := readPid(d.Pidfile)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil
		}
		return err
	}
	what := fmt.Sprintf("%s %s (pid %d)", d.Node, d.Name, pid)
	if p, ok := findProcess(pid); ok {
		sig := syscall.SIGKILL
		if mode == RestartGraceful {
			sig = syscall.SIGTERM
		}
		if err := syscall.Kill(pid, sig); err != nil && !errors.Is(err, syscall.ESRCH) {
			return fmt.Errorf("stop %s: %w", what, err)
		}
		if err := poll.Until(ctx, stopTimeout, pollEvery, what+" to exit", func(context.Context) (bool, error) { return p.gone(), nil }); err != nil {
			return err
		}
	}
	err = poll.Until(ctx, stopTimeout, pollEvery, what+" pidfile lock release", func(context.Context) (bool, error) {
		locked, err := pidfileLocked(d.Pidfile)
		return !locked, err
	})
	if err != nil {
		return err
	}
	return removeStalePidfile(d.Pidfile, pid)
}

// stopTimeout bounds each wait of stopDaemon; generous because a loaded
// CI machine can take seconds to schedule an exiting daemon's threads.
const stopTimeout = 20 * time.Second

// pollEvery is how often this package's waits look again.
const pollEvery = 10 * time.Millisecond

// Poll waits with poll.Until, but a check's error only means "not yet"
// (the last one is named on timeout). It remains for callers outside this
// package written against it; code here uses poll.Until, where an error
// ends the wait.
func Poll(ctx context.Context, timeout time.Duration, what string, check func(context.Context) (bool, error)) error {
	return poll.Until(ctx, timeout, pollEvery, what, func(ctx context.Context) (bool, error) {
		done, err := check(ctx)
		if err != nil {
			return false, poll.Retry("%v", err)
		}
		return done, nil
	})
}
