package localnetenv

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/nqos/nqos/harness/lifeprobe"
	"github.com/nqos/nqos/harness/marks"

	"github.com/nqos/nqos/harness"
	"github.com/nqos/nqos/harness/results"
	"github.com/nqos/nqos/scenarios"
)

// Timeouts of the controller steps.
const (
	syncTimeout     = 60 * time.Second // process start to its synced log line
	convergeTimeout = 30 * time.Second // synced to the NB equal to the compiler's rows
	markedTimeout   = 30 * time.Second // a steady run of marked probe packets
	// steadyWindow is the baseline before and the steady state after a
	// controller step: half its nominal probe packets marked in a row.
	steadyWindow = time.Second
)

// controllerProc is the shipped nqos-controller run as a subprocess
// (scenarios with restartController or upgrade steps), so a step can
// SIGTERM or SIGKILL it and start a new one.
type controllerProc struct {
	cfg controllerConfig
	cur *ctrlProcess // nil while no process runs
}

// launch starts a process of the configuration.
func (p *controllerProc) launch(ctx context.Context) error {
	cur, err := launchController(ctx, p.cfg)
	if err != nil {
		return err
	}
	p.cur = cur
	return nil
}

// start launches a process and waits until it is synced.
func (p *controllerProc) start(ctx context.Context) error {
	if err := p.launch(ctx); err != nil {
		return err
	}
	return p.cur.WaitSynced(ctx, syncTimeout)
}

// close kills the controller process.
func (p *controllerProc) close() error {
	if p.cur != nil {
		return p.cur.Kill()
	}
	return nil
}

// controllerBin is the nqos-controller binary the harness runs as a
// process (Provisioner.ControllerBin): it must exist, the harness builds
// nothing.
func (e *testbedEnv) controllerBin() (string, error) {
	if e.ctrlBin == "" {
		return "", errors.New("the scenario runs nqos-controller as a process: no binary given (Provisioner.ControllerBin, make build's bin/nqos-controller)")
	}
	if _, err := os.Stat(e.ctrlBin); err != nil {
		return "", fmt.Errorf("nqos-controller binary: %w (build it: make build)", err)
	}
	return e.ctrlBin, nil
}

// stopMode maps a scenario restart mode to a controller stopSignal.
func stopMode(mode string) stopSignal {
	if mode == scenarios.ControllerKill9 {
		return stopKill
	}
	return stopGraceful
}

// restartControllerProc restarts the controller process (at the spec's kill
// point of its burst) while the VM's marked probe stream runs, then waits
// until the NB equals the compiler's rows and marking is steady. On
// interconnect it restarts the controller of the VM's zone and every
// zone must converge.
func (e *testbedEnv) RestartController(ctx context.Context, spec harness.ControllerRestart, vm *scenarios.VM, p *scenarios.Probe) (harness.ControllerResult, error) {
	z, err := e.zoneOfVM(vm.Namespace, vm.Name)
	if err != nil {
		return harness.ControllerResult{}, err
	}
	proc, ok := e.plane.process(z.zone.Name)
	if !ok || proc.cur == nil {
		return harness.ControllerResult{}, fmt.Errorf("restart controller: no controller process runs for zone %s", z.zone.Name)
	}
	s, err := e.probeStream(ctx, vm, p)
	if err != nil {
		return harness.ControllerResult{}, err
	}
	run, err := e.restartUnderProbe(ctx, spec, s, proc, z.zone.NB)
	sr := s.Stop()
	if err != nil {
		return harness.ControllerResult{}, err
	}
	run.stream = sr
	return run.result(), nil
}

// restartRun is one restartController step's measurements.
type restartRun struct {
	monitored
	restart lifeprobe.ControllerRestart
	stream  lifeprobe.Stream
	afterTx int
	burst   bool
}

// monitored is what a controller step measures around its action: the
// NB transactions from its start, the convergence after it and the
// probe's marking from its start to steady marking again.
type monitored struct {
	from, end time.Time
	marks     marks.Count
	converged convergence
	txs       []lifeprobe.Transaction
}

// monitor runs act with an NB monitor on nb (the probed VM's zone's),
// then waits until every zone converged and the probe is steadily marked
// again (what names act in that error).
func (e *testbedEnv) monitor(ctx context.Context, s *markedStream, nb, what string, act func(*nbMonitor) error) (monitored, error) {
	var m monitored
	mon, err := startNBMonitor(ctx, nb)
	if err != nil {
		return m, err
	}
	defer mon.Close()
	base := mon.Count()
	m.from = time.Now()
	if err := act(mon); err != nil {
		return m, err
	}
	if m.converged, err = e.converge(ctx); err != nil {
		return m, err
	}
	if _, err := s.WaitMarkedRun(ctx, time.Now(), markedRun(steadyWindow), markedTimeout); err != nil {
		return m, fmt.Errorf("probe after the %s: %w", what, err)
	}
	m.end = time.Now()
	if err := mon.Sync(ctx); err != nil {
		return m, err
	}
	if err := mon.Err(); err != nil {
		return m, fmt.Errorf("NB monitor: %w", err)
	}
	m.txs = mon.Transactions(base)
	m.marks = s.Marks(m.from, m.end)
	return m, nil
}

// restartUnderProbe restarts proc (the controller writing the NB at nb:
// the one central, or the zone of the probed VM) under the probe.
func (e *testbedEnv) restartUnderProbe(ctx context.Context, spec harness.ControllerRestart, s *markedStream, proc *controllerProc, nb string) (*restartRun, error) {
	run := &restartRun{afterTx: spec.AfterTx, burst: spec.Burst != nil}
	if _, err := s.WaitMarkedRun(ctx, time.Now().Add(-steadyWindow), markedRun(steadyWindow), markedTimeout); err != nil {
		return nil, fmt.Errorf("probe before the restart: %w", err)
	}
	var err error
	run.monitored, err = e.monitor(ctx, s, nb, "restart", func(mon *nbMonitor) error {
		next, rr, err := restartControllerProc(ctx, proc.cur, mon, spec)
		proc.cur, run.restart = next, rr
		return err
	})
	if err != nil {
		return nil, err
	}
	return run, nil
}

func (r *restartRun) result() harness.ControllerResult {
	rr := r.restart
	point := "idle: no burst"
	switch {
	case r.afterTx > 0:
		point = fmt.Sprintf("right after NB transaction %d of the burst (%d seen when the signal went out, %d more of the old process arrived after it)",
			r.afterTx, rr.TxBeforeStop, rr.TxAfterSignal)
	case r.burst:
		point = "at the start of the burst"
	}
	ms := []results.Measure{
		{Name: "kill point: burst transactions before the signal", Count: rr.TxBeforeStop, Unit: "transactions", Note: point},
		lifeprobe.Measured("stop signal → new process started", rr.Down),
		lifeprobe.Measured("new process started → synced", rr.Sync),
		lifeprobe.Measured("stop signal → controller ready (synced)", rr.Down+rr.Sync),
		lifeprobe.Measured("controller ready → NB equal to the compiler's rows", r.converged.after(rr)),
		lifeprobe.Measured("marking gap (longest time without a marked probe packet)", r.marks.Gap),
		lifeprobe.Counted("probe packets seen from the restart on", r.marks.Packets, "packets"),
		lifeprobe.Counted("probe packets unmarked from the restart on", r.marks.Unmarked, "packets"),
		lifeprobe.Counted("probe datagrams lost over the whole stream", r.stream.Lost, "datagrams"),
		lifeprobe.Counted("NB transactions seen during the step", len(r.txs), "transactions"),
		lifeprobe.Counted("NB transactions of the old process after the signal", rr.TxAfterSignal, "transactions"),
		lifeprobe.Counted("NB transactions while no controller ran", rr.TxWhileDown, "transactions"),
	}
	return harness.ControllerResult{Divergence: r.converged.divergence(), TxWhileDown: rr.TxWhileDown,
		Outcome: r.stream.Outcome(r.marks, ms, map[string]any{"restart": rr, "converged": r.converged.res, "marks": r.marks,
			"stream": r.stream, "changes": lifeprobe.CountChanges(r.txs), "transactions": r.txs})}
}
