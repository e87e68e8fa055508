package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/nqos/nqos/harness/localnetenv"
	"github.com/nqos/nqos/internal/poll"
	"github.com/nqos/nqos/kubevirt"
	"github.com/nqos/nqos/scenarios/manifests"
	"github.com/nqos/nqos/topo/localnet"
)

// readyLine is what `up` prints once everything runs; a detaching parent
// waits for it in the child's log.
const readyLine = "running; interrupt (Ctrl-C) to tear down"

// bootTestbed boots the testbed of spec as `nqos-sim run` boots a
// scenario's (localnetenv.Provisioner.Up): with withCtrl, the controller
// runs as the topology deploys it (central: in-process; interconnect: an
// nqos-controller process per zone, ctrlBin, and the status aggregator),
// logging into the run's logs directory. stop stops the controller and
// tears the testbed down.
func bootTestbed(ctx context.Context, spec localnet.Spec, ctrlBin string, withCtrl bool) (tb *localnet.Testbed, stop func() error, err error) {
	if !withCtrl {
		if tb, err = localnet.Up(ctx, spec); err != nil {
			return nil, nil, err
		}
		return tb, func() error { return tb.Close(context.WithoutCancel(ctx)) }, nil
	}
	dir := filepath.Join(localnet.RunDir(spec.RunID), "logs")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, nil, err
	}
	logFile := filepath.Join(dir, "controller.log")
	f, err := os.OpenFile(logFile, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, nil, err
	}
	p := &localnetenv.Provisioner{Log: slog.New(slog.NewTextHandler(f, nil)), ControllerBin: ctrlBin}
	tb, closeTB, err := p.Up(ctx, spec, dir)
	if err != nil {
		return nil, nil, errors.Join(err, f.Close())
	}
	fmt.Printf("controller running (logs: %s)\n", dir)
	return tb, func() error { return errors.Join(closeTB(), f.Close()) }, nil
}

// detachUp re-runs `up` (without --detach) as a background process in its
// own session, its output in the run directory, and returns once it
// printed readyLine; the Kubernetes API and the controller live in that
// process until `nqos-sim down` (which stops every process of the run).
func detachUp(ctx context.Context, runID string, args []string) error {
	if err := localnet.ValidateRunID(runID); err != nil {
		return err
	}
	dir := localnet.RunDir(runID)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	logPath := filepath.Join(dir, "up.log")
	logf, err := os.Create(logPath)
	if err != nil {
		return err
	}
	defer logf.Close()
	self, err := os.Executable()
	if err != nil {
		return err
	}
	childArgs := slices.DeleteFunc(slices.Clone(args), func(a string) bool { return a == "--detach" || a == "-detach" || a == "--detach=true" })
	cmd := exec.Command(self, append([]string{"up", "--detached-log", logPath}, childArgs...)...)
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		return err
	}
	if err := os.WriteFile(pidFile(runID), []byte(strconv.Itoa(cmd.Process.Pid)), 0o644); err != nil {
		return errors.Join(err, cmd.Process.Kill())
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	seen := "" // the log as last read: a failed up removes its run directory, log included
	err = poll.Until(ctx, 5*time.Minute, 200*time.Millisecond, "detached testbed ready", func(context.Context) (bool, error) {
		select {
		case err := <-exited:
			if raw, rerr := os.ReadFile(logPath); rerr == nil {
				seen = string(raw)
			}
			return false, fmt.Errorf("up exited (%v); its output:\n%s", err, seen)
		default:
		}
		if raw, rerr := os.ReadFile(logPath); rerr == nil {
			seen = string(raw)
		}
		return strings.Contains(seen, readyLine), nil
	})
	if err != nil {
		return err
	}
	out := strings.Replace(readLog(logPath), readyLine, "", 1)
	fmt.Print(strings.TrimRight(out, "\n") + "\n")
	fmt.Printf("detached (pid %d, log %s); tear down with: nqos-sim down --run-id %s\n", cmd.Process.Pid, logPath, runID)
	return nil
}

func readLog(path string) string {
	raw, err := os.ReadFile(path)
	if err != nil {
		return fmt.Sprintf("(%v)", err)
	}
	return string(raw)
}

// startWorkloads starts the manifests' objects and VMs, or without
// manifests the n demo VMs; with the Kubernetes API it returns the
// watcher of the migrations users apply (nil without).
func startWorkloads(ctx context.Context, tb *localnet.Testbed, dir *manifestDir, n int) (*upMigrations, error) {
	var m *kubevirt.Manager
	var placement map[string]manifests.Placement
	var err error
	if dir != nil {
		m, placement, err = dir.start(ctx, tb)
	} else {
		m, placement, err = startVMs(ctx, tb, n)
	}
	if err != nil || tb.RESTConfig() == nil || m == nil {
		return nil, err
	}
	return newUpMigrations(tb, m, placement)
}

func pidFile(runID string) string { return filepath.Join(localnet.RunDir(runID), "up.pid") }

// stopDetached ends a detached `up` of the run (SIGTERM: it stops the
// controller and tears its testbed down) and waits until it exited, so
// `down` does not race its teardown. No detached process: nothing to do.
func stopDetached(ctx context.Context, runID string) error {
	raw, err := os.ReadFile(pidFile(runID))
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(raw)))
	if err != nil {
		return fmt.Errorf("%s: %w", pidFile(runID), err)
	}
	if err := syscall.Kill(pid, syscall.SIGTERM); errors.Is(err, syscall.ESRCH) {
		return nil
	} else if err != nil {
		return fmt.Errorf("stop detached up (pid %d): %w", pid, err)
	}
	return poll.Until(ctx, 2*time.Minute, 100*time.Millisecond, fmt.Sprintf("detached up (pid %d) to exit", pid), func(context.Context) (bool, error) {
		return errors.Is(syscall.Kill(pid, 0), syscall.ESRCH), nil
	})
}
