package localnetenv

import (
	"context"
	"errors"
	"fmt"
	"syscall"
	"time"

	"github.com/nqos/nqos/harness/lifeprobe"
)

// stopSignal is how restartControllerProc ends the running process.
type stopSignal string

// Stop modes.
const (
	stopGraceful stopSignal = "graceful" // SIGTERM, clean exit
	stopKill     stopSignal = "kill"     // SIGKILL (kill -9)
)

// controllerRestartSpec is one controller restart.
type controllerRestartSpec struct {
	Mode stopSignal
	// Burst, if set, runs concurrently (object changes the controller
	// reconciles); with AfterTx > 0 the process is stopped right after
	// the monitor saw the AfterTx-th NB transaction since Burst started.
	Burst   func(ctx context.Context) error
	AfterTx int
	// Monitor counts NB transactions (required with AfterTx).
	Monitor *nbMonitor
	// Timeout bounds each wait (default 60 s).
	Timeout time.Duration
}

// restartControllerProc stops cur (after the spec's burst point), starts a
// new process with the same configuration and waits until it is synced.
// The returned ctrlProcess replaces cur (also on most errors, so the
// caller can Close it).
func restartControllerProc(ctx context.Context, cur *ctrlProcess, spec controllerRestartSpec) (*ctrlProcess, lifeprobe.ControllerRestart, error) {
	res := lifeprobe.ControllerRestart{Mode: string(spec.Mode), AfterTx: spec.AfterTx, OldPid: cur.Pid()}
	if spec.Timeout == 0 {
		spec.Timeout = 60 * time.Second
	}
	if spec.AfterTx > 0 && (spec.Monitor == nil || spec.Burst == nil) {
		return cur, res, errors.New("restart controller: AfterTx needs a Monitor and a Burst")
	}
	base := 0
	if spec.Monitor != nil {
		base = spec.Monitor.Count()
	}
	burstDone := make(chan error, 1)
	if spec.Burst != nil {
		go func() { burstDone <- spec.Burst(ctx) }()
	} else {
		burstDone <- nil
	}
	if spec.AfterTx > 0 {
		// Signal from the monitor's goroutine the moment the AfterTx-th
		// transaction arrives; Kill/Stop below then only wait.
		var signalled time.Time
		sig := map[stopSignal]syscall.Signal{stopKill: syscall.SIGKILL, stopGraceful: syscall.SIGTERM}[spec.Mode]
		spec.Monitor.OnCount(base+spec.AfterTx, func() {
			signalled = time.Now()
			if sig != 0 {
				cur.Signal(sig)
			}
			res.TxBeforeStop = spec.Monitor.countLocked() - base
		})
		if err := spec.Monitor.WaitCount(ctx, base+spec.AfterTx, spec.Timeout); err != nil {
			return cur, res, errors.Join(fmt.Errorf("restart controller pid %d: %w", cur.Pid(), err), <-burstDone)
		}
		res.StopAt = signalled
	} else {
		res.StopAt = time.Now()
	}
	if err := stopController(ctx, cur, spec); err != nil {
		return cur, res, errors.Join(err, <-burstDone)
	}
	if spec.Monitor != nil {
		// What the old process sent before it died is committed (or
		// not) by now; count it as the old process's.
		if err := spec.Monitor.Sync(ctx); err != nil {
			return cur, res, errors.Join(err, <-burstDone)
		}
		if spec.AfterTx > 0 {
			res.TxAfterSignal = spec.Monitor.Count() - base - res.TxBeforeStop
		}
	}
	if spec.Monitor != nil && spec.AfterTx == 0 {
		res.TxBeforeStop = spec.Monitor.Count() - base
	}
	if err := <-burstDone; err != nil {
		return cur, res, fmt.Errorf("restart controller: burst: %w", err)
	}
	if spec.Monitor != nil {
		if err := spec.Monitor.Sync(ctx); err != nil {
			return cur, res, err
		}
		res.TxWhileDown = spec.Monitor.Count() - base - res.TxBeforeStop - res.TxAfterSignal
	}
	next, err := cur.Restart(ctx)
	if err != nil {
		return cur, res, err
	}
	res.NewPid = next.Pid()
	res.Down = next.Started().Sub(res.StopAt)
	if err := next.WaitSynced(ctx, spec.Timeout); err != nil {
		return next, res, err
	}
	res.Sync = next.SyncedAt().Sub(next.Started())
	return next, res, nil
}

func stopController(ctx context.Context, c *ctrlProcess, spec controllerRestartSpec) error {
	switch spec.Mode {
	case stopKill:
		return c.Kill()
	case stopGraceful:
		return c.Stop(ctx, spec.Timeout)
	}
	return fmt.Errorf("restart controller pid %d: mode %q: must be %s or %s", c.Pid(), spec.Mode, stopGraceful, stopKill)
}
