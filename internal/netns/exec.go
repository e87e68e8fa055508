package netns

import (
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"strings"

	"golang.org/x/sys/unix"
)

// Start starts cmd inside the namespace the way `ip netns exec` does, with
// no helper process: the child is forked from a locked thread that entered
// the namespace, then a mount namespace of its own (mounts from the host
// still propagate in) with /sys remounted, so /sys/class/net shows the
// namespace's links. That thread is never unlocked (see onWorkerThread):
// its mount namespace and filesystem context are its own, so it ends with
// its goroutine. The zero
// NS starts a plain child. Wait for it as for any started command.
func (n NS) Start(cmd *exec.Cmd) error {
	if n.path == "" {
		return cmd.Start()
	}
	target, err := n.open()
	if err != nil {
		return fmt.Errorf("start %s: %w", strings.Join(cmd.Args, " "), err)
	}
	defer unix.Close(target)
	err = onWorkerThread(func() (bool, error) { return false, startLocked(target, cmd) })
	if err != nil {
		return fmt.Errorf("%s: start %s: %w", n, strings.Join(cmd.Args, " "), err)
	}
	return nil
}

// startLocked prepares the locked calling thread (network namespace,
// private mount namespace, fresh sysfs) and starts cmd from it.
func startLocked(target int, cmd *exec.Cmd) error {
	if err := unix.Setns(target, unix.CLONE_NEWNET); err != nil {
		return fmt.Errorf("enter: %w", err)
	}
	if err := unix.Unshare(unix.CLONE_NEWNS); err != nil {
		return fmt.Errorf("unshare mount namespace: %w", err)
	}
	if err := unix.Mount("", "/", "none", unix.MS_SLAVE|unix.MS_REC, ""); err != nil {
		return fmt.Errorf("make / a slave mount: %w", err)
	}
	var flags uintptr
	if err := unix.Unmount("/sys", unix.MNT_DETACH); err != nil {
		// No sysfs was mounted there; mount one read-only if / is.
		var st unix.Statfs_t
		if unix.Statfs("/sys", &st) == nil && st.Flags&unix.ST_RDONLY != 0 {
			flags = unix.MS_RDONLY
		}
	}
	if err := unix.Mount("sysfs", "/sys", "sysfs", flags, ""); err != nil {
		return fmt.Errorf("mount sysfs: %w", err)
	}
	return cmd.Start()
}

// Output runs argv inside the namespace with env added to the process
// environment and returns its stdout; the error names the command and the
// namespace and carries the command's stderr.
func (n NS) Output(ctx context.Context, env []string, argv ...string) (string, error) {
	if len(argv) == 0 {
		return "", fmt.Errorf("%s: run: empty command", n)
	}
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	if len(env) > 0 {
		cmd.Env = append(cmd.Environ(), env...)
	}
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := n.Start(cmd); err != nil {
		return "", err
	}
	if err := cmd.Wait(); err != nil {
		return out.String(), fmt.Errorf("%s in %s: %w: %s", strings.Join(argv, " "), n, err, strings.TrimSpace(errb.String()))
	}
	return out.String(), nil
}
