package kubeapi

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"time"
)

// process is one child daemon whose output goes to a log file.
type process struct {
	name   string
	cmd    *exec.Cmd
	log    *os.File
	exited chan struct{}
	err    error // valid after exited is closed
}

// stopGrace is how long a daemon gets after SIGTERM before SIGKILL.
const stopGrace = 10 * time.Second

func startProcess(name, bin, logPath string, args ...string) (*process, error) {
	logf, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o644)
	if err != nil {
		return nil, fmt.Errorf("kubeapi: %s log: %w", name, err)
	}
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = logf, logf
	// The daemon dies with its parent even if Close is never reached.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL, Setpgid: true}
	if err := cmd.Start(); err != nil {
		logf.Close()
		return nil, fmt.Errorf("kubeapi: start %s: %w", name, err)
	}
	p := &process{name: name, cmd: cmd, log: logf, exited: make(chan struct{})}
	go func() {
		p.err = cmd.Wait()
		close(p.exited)
	}()
	return p, nil
}

// alive reports an error when the process has already exited.
func (p *process) alive() error {
	select {
	case <-p.exited:
		return fmt.Errorf("kubeapi: %s exited early (%v); see %s", p.name, p.err, p.log.Name())
	default:
		return nil
	}
}

// stop sends SIGTERM, escalates to SIGKILL after stopGrace and waits. A
// daemon that had already exited before stop is an error: the control
// plane died under its user.
func (p *process) stop() error { return p.halt(true) }

// kill is stop without the SIGTERM: for a daemon whose graceful shutdown
// only drains clients and keeps no state.
func (p *process) kill() error { return p.halt(false) }

func (p *process) halt(graceful bool) error {
	defer p.log.Close()
	select {
	case <-p.exited:
		return fmt.Errorf("kubeapi: %s had exited before Close (%v); see %s", p.name, p.err, p.log.Name())
	default:
	}
	if graceful {
		if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil && !errors.Is(err, os.ErrProcessDone) {
			return fmt.Errorf("kubeapi: stop %s: %w", p.name, err)
		}
		select {
		case <-p.exited:
			return nil
		case <-time.After(stopGrace):
		}
	}
	if err := p.cmd.Process.Kill(); err != nil && !errors.Is(err, os.ErrProcessDone) {
		return fmt.Errorf("kubeapi: kill %s: %w", p.name, err)
	}
	<-p.exited
	return nil
}

// pollEvery is how often poll checks.
const pollEvery = 50 * time.Millisecond

// poll calls check every interval until it returns nil, the process dies
// or ctx ends; the last check error is reported on timeout.
func (p *process) poll(ctx context.Context, what string, check func(context.Context) error) error {
	tick := time.NewTicker(pollEvery)
	defer tick.Stop()
	var last error
	for {
		if err := p.alive(); err != nil {
			return err
		}
		if last = check(ctx); last == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("kubeapi: %s not %s: %w (last: %v); see %s", p.name, what, ctx.Err(), last, p.log.Name())
		case <-p.exited:
		case <-tick.C:
		}
	}
}

func logPath(dir, name string) string { return filepath.Join(dir, name+".log") }
