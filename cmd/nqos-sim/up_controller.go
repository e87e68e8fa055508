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

	"github.com/nqos/nqos/internal/controller"
	"github.com/nqos/nqos/internal/ovnnb"
	"github.com/nqos/nqos/internal/poll"
	"github.com/nqos/nqos/topo/localnet"
)

// readyLine is what `up` prints once everything runs; a detaching parent
// waits for it in the child's log.
const readyLine = "running; interrupt (Ctrl-C) to tear down"

// startController starts the NetworkQoS controller in-process against the
// testbed's API server, one per zone on its NB (interconnect: with
// --node, as the DaemonSet runs it), waits until each is synced, and
// returns the stop function of them all (which reports how they ended).
func startController(ctx context.Context, tb *localnet.Testbed, logFile string) (func() error, error) {
	f, err := os.OpenFile(logFile, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, err
	}
	var stops []func() error
	stopAll := func() error {
		var errs []error
		for _, s := range stops {
			errs = append(errs, s())
		}
		return errors.Join(append(errs, f.Close())...)
	}
	for _, z := range tb.Zones() {
		node := z.Name
		if node == localnet.GlobalZone {
			node = ""
		}
		log := slog.New(slog.NewTextHandler(f, nil)).With("zone", z.Name)
		stop, err := startZoneController(ctx, tb, z.NB, node, log)
		if err != nil {
			return nil, errors.Join(err, stopAll())
		}
		stops = append(stops, stop)
	}
	fmt.Printf("controller running (logs: %s)\n", logFile)
	return stopAll, nil
}

// startZoneController runs one controller on the NB at addr (node: its
// --node) until the returned stop function is called.
func startZoneController(ctx context.Context, tb *localnet.Testbed, addr, node string, log *slog.Logger) (func() error, error) {
	nb, err := ovnnb.Dial(ctx, addr, log.With("component", "ovnnb"))
	if err != nil {
		return nil, fmt.Errorf("controller: NB %s: %w", addr, err)
	}
	c, err := controller.New(controller.Config{Kube: tb.RESTConfig(), NB: nb, Node: node, Log: log})
	if err != nil {
		nb.Close()
		return nil, err
	}
	cctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	done := make(chan error, 1)
	go func() { done <- c.Run(cctx) }()
	stop := func() error {
		cancel()
		err := <-done
		nb.Close()
		if errors.Is(err, context.Canceled) {
			err = nil
		}
		return err
	}
	err = poll.Until(ctx, 60*time.Second, 0, "controller ready", func(context.Context) (bool, error) {
		select {
		case err := <-done:
			done <- err
			return false, fmt.Errorf("controller stopped: %w", err)
		default:
			return c.Ready(), nil
		}
	})
	if err != nil {
		return nil, errors.Join(err, stop())
	}
	return stop, nil
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

// startWorkloads starts the controller (when asked) and then the
// manifests' objects and VMs, or without manifests the n demo VMs; the
// returned function stops the controller.
func startWorkloads(ctx context.Context, tb *localnet.Testbed, dir *manifestDir, n int, withCtrl bool) (func() error, error) {
	stop := func() error { return nil }
	if withCtrl {
		var err error
		if stop, err = startController(ctx, tb, filepath.Join(localnet.RunDir(tb.Spec().RunID), "logs", "controller.log")); err != nil {
			return nil, err
		}
	}
	var err error
	if dir != nil {
		err = dir.start(ctx, tb)
	} else {
		err = startVMs(ctx, tb, n)
	}
	if err != nil {
		return nil, errors.Join(err, stop())
	}
	return stop, nil
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
