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
)

// RestartMode is how RestartDaemon stops a daemon.
type RestartMode string

// Restart modes.
const (
	RestartKill     RestartMode = "kill"     // SIGKILL
	RestartGraceful RestartMode = "graceful" // SIGTERM, wait for exit
)

// start runs a detached daemon; the daemon's --detach makes the command
// return only once the daemon is initialised.
func (r runner) startDaemon(ctx context.Context, d daemonState) error {
	if _, err := r.run(ctx, d.Netns, d.Env, d.Argv...); err != nil {
		return fmt.Errorf("start %s %s: %w (log %s)", d.Node, d.Name, err, d.Log)
	}
	return nil
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

// alive reports whether pid runs (and is not a zombie).
func alive(pid int) bool {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	f := strings.Fields(string(raw[strings.LastIndexByte(string(raw), ')')+1:]))
	return len(f) > 0 && f[0] != "Z"
}

// stopDaemon signals the daemon in its pidfile and waits until it is gone.
func stopDaemon(ctx context.Context, d daemonState, mode RestartMode) error {
	pid, err := readPid(d.Pidfile)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil
		}
		return err
	}
	sig := syscall.SIGKILL
	if mode == RestartGraceful {
		sig = syscall.SIGTERM
	}
	if err := syscall.Kill(pid, sig); err != nil && !errors.Is(err, syscall.ESRCH) {
		return fmt.Errorf("stop %s %s (pid %d): %w", d.Node, d.Name, pid, err)
	}
	return waitGone(ctx, pid, fmt.Sprintf("%s %s (pid %d) to exit", d.Node, d.Name, pid))
}

// waitGone polls until pid no longer runs.
func waitGone(ctx context.Context, pid int, what string) error {
	return Poll(ctx, 10*time.Second, what, func(context.Context) (bool, error) { return !alive(pid), nil })
}

// Poll calls check every few milliseconds until it reports done, it
// fails, or the timeout passes; the error names what was awaited.
func Poll(ctx context.Context, timeout time.Duration, what string, check func(context.Context) (bool, error)) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	t := time.NewTicker(10 * time.Millisecond)
	defer t.Stop()
	var last error
	for {
		done, err := check(ctx)
		if done && err == nil {
			return nil
		}
		last = err
		select {
		case <-ctx.Done():
			if last != nil {
				return fmt.Errorf("waiting for %s: %w (last: %v)", what, ctx.Err(), last)
			}
			return fmt.Errorf("waiting for %s: %w", what, ctx.Err())
		case <-t.C:
		}
	}
}
