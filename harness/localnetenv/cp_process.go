package localnetenv

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/nqos/nqos/internal/poll"
)

// syncedMessage is the log message the controller (internal/controller)
// prints once its startup garbage collection and legacy migration
// succeeded and it is ready.
const syncedMessage = "controller ready"

// aggregatorReady is the log message of `nqos-controller --aggregate-only`
// once its caches are synced.
const aggregatorReady = "aggregator ready"

// controllerConfig is how to run nqos-controller.
type controllerConfig struct {
	Bin        string // the nqos-controller binary
	Kubeconfig string
	NB         string
	Node       string // optional --node
	// Aggregate runs --aggregate-only (no NB, no --node): the status
	// aggregator of the per-zone controllers.
	Aggregate bool
	// LogPath receives the process's stderr (JSON logs), appended to
	// across restarts.
	LogPath string
}

// ctrlProcess is one running nqos-controller process.
type ctrlProcess struct {
	cfg     controllerConfig
	cmd     *exec.Cmd
	started time.Time
	synced  atomic.Int64 // unix nanos of the synced log line, 0 before
	exited  chan struct{}
	termed  atomic.Bool // a SIGTERM was sent: a second one would force an exit mid-drain
	mu      sync.Mutex
	waitErr error
}

// logLine is the part of a controller log line this package reads.
type logLine struct {
	Msg string `json:"msg"`
}

// launchController starts the controller process; WaitSynced waits until
// it is ready. Kill or Stop ends it.
func launchController(ctx context.Context, cfg controllerConfig) (*ctrlProcess, error) {
	if cfg.Bin == "" || cfg.Kubeconfig == "" || (cfg.NB == "") != cfg.Aggregate || cfg.LogPath == "" {
		return nil, fmt.Errorf("controller: Bin, Kubeconfig, LogPath and NB (none with Aggregate) are required (got %+v)", cfg)
	}
	logf, err := os.OpenFile(cfg.LogPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("controller: log: %w", err)
	}
	// The testbed runs no OVN-Kubernetes controller, so no NetworkQoS of its.
	args := []string{"--kubeconfig", cfg.Kubeconfig, "--nb", cfg.NB, "--ovnkube-enable-network-qos=false"}
	if cfg.Aggregate {
		args = []string{"--kubeconfig", cfg.Kubeconfig, "--aggregate-only"}
	}
	if cfg.Node != "" {
		args = append(args, "--node", cfg.Node)
	}
	cmd := exec.Command(cfg.Bin, args...)
	// The controller must not outlive a test binary that dies.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		logf.Close()
		return nil, fmt.Errorf("controller: %w", err)
	}
	cmd.Stdout = logf
	c := &ctrlProcess{cfg: cfg, cmd: cmd, exited: make(chan struct{})}
	if err := cmd.Start(); err != nil {
		logf.Close()
		return nil, fmt.Errorf("controller: start %s: %w", cfg.Bin, err)
	}
	c.started = time.Now()
	go c.follow(stderr, logf)
	return c, nil
}

// follow copies the logs to the log file, notes the synced line and
// reaps the process once its stderr closed.
func (c *ctrlProcess) follow(stderr io.Reader, logf *os.File) {
	defer close(c.exited)
	defer logf.Close()
	sc := bufio.NewScanner(stderr)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Bytes()
		_, _ = logf.Write(append(line, '\n'))
		var l logLine
		if json.Unmarshal(line, &l) == nil && l.Msg == c.cfg.readyMessage() {
			c.synced.CompareAndSwap(0, time.Now().UnixNano())
		}
	}
	err := c.cmd.Wait()
	c.mu.Lock()
	c.waitErr = err
	c.mu.Unlock()
}

// Pid is the process ID.
func (c *ctrlProcess) Pid() int { return c.cmd.Process.Pid }

// Started is when the process was started.
func (c *ctrlProcess) Started() time.Time { return c.started }

// SyncedAt is when the process logged that it is synced (zero before).
func (c *ctrlProcess) SyncedAt() time.Time {
	if n := c.synced.Load(); n != 0 {
		return time.Unix(0, n)
	}
	return time.Time{}
}

// Running reports whether the process has not exited.
func (c *ctrlProcess) Running() bool {
	select {
	case <-c.exited:
		return false
	default:
		return true
	}
}

// WaitSynced waits until the controller logged that it is synced.
func (c *ctrlProcess) WaitSynced(ctx context.Context, timeout time.Duration) error {
	return poll.Until(ctx, timeout, 5*time.Millisecond, fmt.Sprintf("controller pid %d synced", c.Pid()), func(context.Context) (bool, error) {
		if !c.SyncedAt().IsZero() {
			return true, nil
		}
		if !c.Running() {
			return false, fmt.Errorf("controller exited before syncing: %v (log %s)", c.exitErr(), c.cfg.LogPath)
		}
		return false, nil
	})
}

func (c *ctrlProcess) exitErr() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.waitErr
}

// Signal sends sig without waiting (safe from an nbMonitor.OnCount hook).
func (c *ctrlProcess) Signal(sig syscall.Signal) {
	if sig == syscall.SIGTERM {
		c.termed.Store(true)
	}
	_ = c.cmd.Process.Signal(sig)
}

// Kill sends SIGKILL and waits until the process is gone.
func (c *ctrlProcess) Kill() error {
	if !c.Running() {
		return nil
	}
	if err := c.cmd.Process.Signal(syscall.SIGKILL); err != nil && !errors.Is(err, os.ErrProcessDone) {
		return fmt.Errorf("controller pid %d: kill: %w", c.Pid(), err)
	}
	<-c.exited
	return nil
}

// Stop sends SIGTERM (unless one was sent already through Signal: a
// second one forces nqos-sim's exit mid-drain) and waits up to timeout for it to exit;
// an exit other than a clean one is an error.
func (c *ctrlProcess) Stop(ctx context.Context, timeout time.Duration) error {
	if !c.termed.Swap(true) { // once: a second SIGTERM would end the drain early
		if err := c.cmd.Process.Signal(syscall.SIGTERM); err != nil && !errors.Is(err, os.ErrProcessDone) {
			return fmt.Errorf("controller pid %d: terminate: %w", c.Pid(), err)
		}
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	select {
	case <-c.exited:
	case <-ctx.Done():
		return errors.Join(fmt.Errorf("controller pid %d: no exit after SIGTERM: %w", c.Pid(), ctx.Err()), c.Kill())
	}
	if err := c.exitErr(); err != nil {
		return fmt.Errorf("controller pid %d: exit after SIGTERM: %w (log %s)", c.Pid(), err, c.cfg.LogPath)
	}
	return nil
}

// readyMessage is the log message that says the process is synced.
func (cfg controllerConfig) readyMessage() string {
	if cfg.Aggregate {
		return aggregatorReady
	}
	return syncedMessage
}
