package localnetenv

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"github.com/nqos/nqos/harness/results"
	"github.com/nqos/nqos/internal/controller"
	"github.com/nqos/nqos/topo/localnet"
)

// controlPlane runs the NetworkQoS controller as the testbed's topology
// deploys it: one controller for the central NB, or one per zone.
type controlPlane interface {
	// start starts the controller(s) and returns once each is synced.
	start(ctx context.Context, e *Env, log *slog.Logger) error
	close() error
	logs() []results.Log
	// process is the controller process serving zone, if one runs as a
	// process (the restartController and upgrade steps act on it).
	process(zone string) (*controllerProc, bool)
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
	cancel context.CancelFunc
	proc   *controllerProc
}

func (p *centralPlane) start(ctx context.Context, e *Env, log *slog.Logger) error {
	if e.sc.ControllerProcess() {
		err := e.startProcess(ctx)
		p.proc = e.proc
		return err
	}
	ctrl, err := controller.New(controller.Config{Kube: e.tb.RESTConfig(), NB: e.nb, Log: log})
	if err != nil {
		return err
	}
	cctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	p.cancel = cancel
	e.ctrlWG.Add(1)
	go func() {
		defer e.ctrlWG.Done()
		err := ctrl.Run(cctx)
		e.ctrlMu.Lock()
		e.ctrlEr = err
		e.ctrlMu.Unlock()
	}()
	return localnet.Poll(ctx, 60*time.Second, "controller synced", func(context.Context) (bool, error) {
		return ctrl.Ready(), e.controllerErr()
	})
}

func (p *centralPlane) close() error {
	if p.cancel != nil {
		p.cancel()
	}
	return nil
}

func (p *centralPlane) logs() []results.Log { return nil }

func (p *centralPlane) process(string) (*controllerProc, bool) { return p.proc, p.proc != nil }

// zonePlane is one `nqos-controller --node <node>` process per zone on
// the zone's NB unix socket, as the DaemonSet runs it on every node: the
// built nqos-controller binary (Provisioner.ZoneControllerBin). Scenarios
// that boot no controller (upgrade) get the processes configured, not
// started.
type zonePlane struct {
	zones []string
	procs []*controllerProc
}

func (p *zonePlane) start(ctx context.Context, e *Env, _ *slog.Logger) error {
	if e.zoneBin == "" {
		return errors.New("interconnect runs nqos-controller per zone: no binary given (Provisioner.ZoneControllerBin, make build's bin/nqos-controller)")
	}
	if _, err := os.Stat(e.zoneBin); err != nil {
		return fmt.Errorf("zone controller binary: %w (build it: make build)", err)
	}
	for _, z := range e.zones {
		cfg := ControllerConfig{Bin: e.zoneBin, Direct: true, Kubeconfig: e.tb.Kubeconfig(), NB: z.zone.NB, Node: z.zone.Name,
			LogPath: filepath.Join(e.dir, "nqos-controller-"+z.zone.Name+".log")}
		p.zones, p.procs = append(p.zones, z.zone.Name), append(p.procs, &controllerProc{cfg: cfg})
	}
	if !e.sc.BootsController() {
		return nil
	}
	for i, c := range p.procs {
		cur, err := StartController(ctx, c.cfg)
		if err != nil {
			return fmt.Errorf("zone %s: %w", p.zones[i], err)
		}
		c.cur = cur
	}
	for i, c := range p.procs {
		if err := c.cur.WaitSynced(ctx, syncTimeout); err != nil {
			return fmt.Errorf("zone %s: %w", p.zones[i], err)
		}
	}
	return nil
}

func (p *zonePlane) close() error {
	var errs []error
	for _, c := range p.procs {
		errs = append(errs, c.close())
	}
	return errors.Join(errs...)
}

func (p *zonePlane) logs() []results.Log {
	paths := make([]string, len(p.procs))
	for i, c := range p.procs {
		paths[i] = c.cfg.LogPath
	}
	return tailLogs(paths)
}

func (p *zonePlane) process(zone string) (*controllerProc, bool) {
	for i, z := range p.zones {
		if z == zone {
			return p.procs[i], true
		}
	}
	return nil, false
}
