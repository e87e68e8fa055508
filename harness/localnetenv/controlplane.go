package localnetenv

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"slices"
	"time"

	"github.com/nqos/nqos/harness/results"
	"github.com/nqos/nqos/internal/controller"
	"github.com/nqos/nqos/internal/controller/app"
	"github.com/nqos/nqos/topo/localnet"
)

// controlPlane runs the NetworkQoS controller as the testbed's topology
// deploys it: one controller for the central NB, or one per zone.
type controlPlane interface {
	// start starts the controller(s) and returns once each is synced.
	start(ctx context.Context, e *testbedEnv, log *slog.Logger) error
	close() error
	logs() []results.Log
	// process is the controller process serving zone, if one runs as a
	// process (the restartController and upgrade steps act on it).
	process(zone string) (*controllerProc, bool)
	// boot starts the configured processes a scenario did not boot
	// (upgrade) and returns when the last of them was synced.
	boot(ctx context.Context) (time.Time, error)
}

// newControlPlane is the control plane of the testbed's topology.
func newControlPlane(t localnet.Topology) controlPlane {
	if t == localnet.Interconnect {
		return &zonePlane{}
	}
	return &centralPlane{}
}

// centralPlane is one controller serving every node: in-process, or as a
// process for the scenarios that restart or upgrade it (controller.go).
type centralPlane struct {
	// the in-process controller: cancel ends it, done is closed once it
	// returned err.
	cancel context.CancelFunc
	done   chan struct{}
	err    error
	proc   *controllerProc
}

func (p *centralPlane) start(ctx context.Context, e *testbedEnv, log *slog.Logger) error {
	if e.sc.ControllerProcess() {
		bin, err := e.controllerBin()
		if err != nil {
			return err
		}
		p.proc = &controllerProc{cfg: controllerConfig{Bin: bin, Kubeconfig: e.tb.Kubeconfig(), NB: e.tb.NBAddress(),
			LogPath: filepath.Join(e.dir, "controller.log")}}
		if !e.sc.BootsController() {
			return nil
		}
		return p.proc.start(ctx)
	}
	ctrl, err := controller.New(controller.Config{Kube: e.tb.RESTConfig(), NB: e.nb, Log: log})
	if err != nil {
		return err
	}
	cctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	p.cancel, p.done = cancel, make(chan struct{})
	go func() {
		defer close(p.done)
		p.err = ctrl.Run(cctx)
	}()
	return localnet.Poll(ctx, 60*time.Second, "controller synced", func(context.Context) (bool, error) {
		select {
		case <-p.done:
			if p.err != nil {
				return false, fmt.Errorf("controller stopped: %w", p.err)
			}
		default:
		}
		return ctrl.Ready(), nil
	})
}

// close ends the in-process controller and waits until it returned, or
// kills the controller process.
func (p *centralPlane) close() error {
	if p.cancel != nil {
		p.cancel()
		<-p.done
	}
	if p.proc != nil {
		return p.proc.close()
	}
	return nil
}

// logs is the tail of the controller process's log, if any.
func (p *centralPlane) logs() []results.Log {
	if p.proc == nil {
		return nil
	}
	if l, ok := tailLog(p.proc.cfg.LogPath, "nqos-controller.log"); ok {
		return []results.Log{l}
	}
	return nil
}

func (p *centralPlane) process(string) (*controllerProc, bool) { return p.proc, p.proc != nil }

func (p *centralPlane) boot(ctx context.Context) (time.Time, error) {
	if p.proc == nil {
		return time.Time{}, errors.New("the controller runs in-process: nothing to boot")
	}
	return bootProcs(ctx, p.proc)
}

// bootProcs starts each process and waits until every one is synced;
// it returns when the last was.
func bootProcs(ctx context.Context, procs ...*controllerProc) (time.Time, error) {
	for _, c := range procs {
		if err := c.launch(ctx); err != nil {
			return time.Time{}, err
		}
	}
	var last time.Time
	for _, c := range procs {
		if err := c.cur.WaitSynced(ctx, syncTimeout); err != nil {
			return time.Time{}, err
		}
		if at := c.cur.SyncedAt(); at.After(last) {
			last = at
		}
	}
	return last, nil
}

// zonePlane is one `nqos-controller --node <node>` process per zone on
// the zone's NB unix socket, as the DaemonSet runs it on every node, and
// `nqos-controller --aggregate-only` beside them, writing status.status
// from every zone's condition (config/deploy/aggregator.yaml): the built
// nqos-controller binary (Provisioner.ControllerBin). Scenarios that
// boot no controller (upgrade) get the zone processes configured, not
// started.
type zonePlane struct {
	procs []*controllerProc // by zone, each with --node <zone>
	agg   *controllerProc
}

func (p *zonePlane) start(ctx context.Context, e *testbedEnv, _ *slog.Logger) error {
	bin, err := e.controllerBin()
	if err != nil {
		return fmt.Errorf("interconnect: %w", err)
	}
	// The zones' heartbeat Leases live in their own namespace, as
	// config/deploy/namespace.yaml creates it.
	if err := localnet.EnsureNamespace(ctx, e.kube, app.DefaultHeartbeatNamespace); err != nil {
		return fmt.Errorf("interconnect: zone heartbeats: %w", err)
	}
	for _, z := range e.zones {
		cfg := controllerConfig{Bin: bin, Kubeconfig: e.tb.Kubeconfig(), NB: z.zone.NB, Node: z.zone.Name,
			LogPath: filepath.Join(e.dir, "nqos-controller-"+z.zone.Name+".log")}
		p.procs = append(p.procs, &controllerProc{cfg: cfg})
	}
	p.agg = &controllerProc{cfg: controllerConfig{Bin: bin, Aggregate: true, Kubeconfig: e.tb.Kubeconfig(),
		LogPath: filepath.Join(e.dir, "nqos-aggregator.log")}}
	if err := p.agg.launch(ctx); err != nil {
		return fmt.Errorf("status aggregator: %w", err)
	}
	if e.sc.BootsController() {
		if _, err := p.boot(ctx); err != nil {
			return err
		}
	}
	if err := p.agg.cur.WaitSynced(ctx, syncTimeout); err != nil {
		return fmt.Errorf("status aggregator: %w", err)
	}
	return nil
}

func (p *zonePlane) boot(ctx context.Context) (time.Time, error) {
	at, err := bootProcs(ctx, p.procs...)
	if err != nil {
		return at, fmt.Errorf("zone controllers: %w", err)
	}
	return at, nil
}

func (p *zonePlane) close() error {
	var errs []error
	for _, c := range p.all() {
		errs = append(errs, c.close())
	}
	return errors.Join(errs...)
}

func (p *zonePlane) logs() []results.Log {
	var paths []string
	for _, c := range p.all() {
		paths = append(paths, c.cfg.LogPath)
	}
	return tailLogs(paths)
}

// all are the zone processes and the aggregator (once configured).
func (p *zonePlane) all() []*controllerProc {
	if p.agg == nil {
		return p.procs
	}
	return append(slices.Clone(p.procs), p.agg)
}

func (p *zonePlane) process(zone string) (*controllerProc, bool) {
	for _, c := range p.procs {
		if c.cfg.Node == zone {
			return c, true
		}
	}
	return nil, false
}
