package localnetenv

import (
	"context"
	"errors"
	"fmt"
	"syscall"
	"time"

	"github.com/nqos/nqos/harness"
	"github.com/nqos/nqos/harness/lifeprobe"
)

// stopSignal is how restartControllerProc ends the running process.
type stopSignal string

// Stop modes.
const (
	stopGraceful stopSignal = "graceful" // SIGTERM, clean exit
	stopKill     stopSignal = "kill"     // SIGKILL (kill -9)
)

// restartControllerProc stops cur as spec.Mode says (after the spec's
// burst point), starts a new process with the same configuration and
// waits until it is synced; mon counts the NB transactions, each wait is
// bounded by syncTimeout. The returned ctrlProcess replaces cur (also on
// most errors, so the caller can Close it).
func restartControllerProc(ctx context.Context, cur *ctrlProcess, mon *nbMonitor, spec harness.ControllerRestart) (*ctrlProcess, lifeprobe.ControllerRestart, error) {
	mode := stopMode(spec.Mode)
	res := lifeprobe.ControllerRestart{Mode: string(mode), AfterTx: spec.AfterTx, OldPid: cur.Pid()}
	if spec.AfterTx > 0 && spec.Burst == nil {
		return cur, res, errors.New("restart controller: AfterTx needs a Burst")
	}
	base := mon.Count()
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
		sig := map[stopSignal]syscall.Signal{stopKill: syscall.SIGKILL, stopGraceful: syscall.SIGTERM}[mode]
		mon.OnCount(base+spec.AfterTx, func() {
			signalled = time.Now()
			cur.Signal(sig)
			res.TxBeforeStop = mon.countLocked() - base
		})
		if err := mon.WaitCount(ctx, base+spec.AfterTx, syncTimeout); err != nil {
			return cur, res, errors.Join(fmt.Errorf("restart controller pid %d: %w", cur.Pid(), err), <-burstDone)
		}
		res.StopAt = signalled
	} else {
		res.StopAt = time.Now()
	}
	if err := stopController(ctx, cur, mode); err != nil {
		return cur, res, errors.Join(err, <-burstDone)
	}
	// What the old process sent before it died is committed (or not) by
	// now; count it as the old process's.
	if err := mon.Sync(ctx); err != nil {
		return cur, res, errors.Join(err, <-burstDone)
	}
	if spec.AfterTx > 0 {
		res.TxAfterSignal = mon.Count() - base - res.TxBeforeStop
	} else {
		res.TxBeforeStop = mon.Count() - base
	}
	if err := <-burstDone; err != nil {
		return cur, res, fmt.Errorf("restart controller: burst: %w", err)
	}
	if err := mon.Sync(ctx); err != nil {
		return cur, res, err
	}
	res.TxWhileDown = mon.Count() - base - res.TxBeforeStop - res.TxAfterSignal
	next, err := launchController(ctx, cur.cfg)
	if err != nil {
		return cur, res, err
	}
	res.NewPid = next.Pid()
	res.Down = next.Started().Sub(res.StopAt)
	if err := next.WaitSynced(ctx, syncTimeout); err != nil {
		return next, res, err
	}
	res.Sync = next.SyncedAt().Sub(next.Started())
	return next, res, nil
}

// stopController ends c by mode, waiting up to syncTimeout for a
// graceful exit.
func stopController(ctx context.Context, c *ctrlProcess, mode stopSignal) error {
	if mode == stopKill {
		return c.Kill()
	}
	return c.Stop(ctx, syncTimeout)
}
