package deploytest

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/nqos/nqos/internal/controller"
	"github.com/nqos/nqos/internal/freeport"
)

// builtBinary is cmd/nqos-controller built once per test binary.
type builtBinary struct {
	once sync.Once
	dir  string
	path string
	err  error
}

func (b *builtBinary) get(t testing.TB) string {
	t.Helper()
	b.once.Do(func() {
		if b.dir, b.err = os.MkdirTemp("", "nqos-controller-bin-"); b.err != nil {
			return
		}
		b.path = filepath.Join(b.dir, "nqos-controller")
		cmd := exec.Command("go", "build", "-o", b.path, "./cmd/nqos-controller")
		cmd.Dir = repoRoot
		if out, err := cmd.CombinedOutput(); err != nil {
			b.err = fmt.Errorf("go build ./cmd/nqos-controller: %w: %s", err, out)
		}
	})
	if b.err != nil {
		t.Fatal(b.err)
	}
	return b.path
}

func (b *builtBinary) remove() {
	if b.dir != "" {
		_ = os.RemoveAll(b.dir)
	}
}

// proc is one nqos-controller process.
type proc struct {
	t     testing.TB
	id    string
	probe string // host:port of /healthz and /readyz
	cmd   *exec.Cmd
	done  chan struct{}
	state *os.ProcessState
	log   *lockedBuffer
}

type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

func freeAddr(t testing.TB) string {
	t.Helper()
	addr, err := freeport.Addr()
	if err != nil {
		t.Fatal(err)
	}
	return addr
}

// startProc runs bin with args plus an identity and a probe address,
// with env added to the test's environment; it is killed at test end if
// still running, and its log shown on failure.
func startProc(t testing.TB, bin, id string, env []string, args ...string) *proc {
	t.Helper()
	p := &proc{t: t, id: id, probe: freeAddr(t), done: make(chan struct{}), log: &lockedBuffer{}}
	args = append(args, "--leader-elect-identity="+id, "--health-probe-bind-address="+p.probe)
	p.cmd = exec.Command(bin, args...)
	p.cmd.Env = append(os.Environ(), env...)
	p.cmd.Stdout, p.cmd.Stderr = p.log, p.log
	p.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := p.cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", bin, err)
	}
	go func() {
		_ = p.cmd.Wait()
		p.state = p.cmd.ProcessState
		close(p.done)
	}()
	t.Cleanup(func() {
		select {
		case <-p.done:
		default:
			_ = p.cmd.Process.Kill()
			<-p.done
		}
		if t.Failed() {
			t.Logf("log of %s:\n%s", id, tail(p.log.String(), 40))
		}
	})
	return p
}

func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}

// readyz returns the /readyz status code and body.
func (p *proc) readyz(ctx context.Context) (int, string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+p.probe+"/readyz", nil)
	if err != nil {
		return 0, "", err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	return resp.StatusCode, strings.TrimSpace(string(body)), err
}

// exited waits up to timeout for the process to end and returns its
// exit code (-1 when killed by a signal).
func (p *proc) exited(timeout time.Duration) (int, error) {
	select {
	case <-p.done:
		return p.state.ExitCode(), nil
	case <-time.After(timeout):
		return 0, fmt.Errorf("%s still running after %v", p.id, timeout)
	}
}

// terminate sends SIGTERM and requires exit code 0 within the drain
// bound plus 5 s.
func (p *proc) terminate() {
	p.t.Helper()
	start := time.Now()
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		p.t.Fatal(err)
	}
	code, err := p.exited(controller.DrainTimeout + 5*time.Second)
	if err != nil || code != 0 {
		p.t.Fatalf("SIGTERM of %s: exit code %d, %v; want 0", p.id, code, err)
	}
	p.t.Logf("SIGTERM of %s to exit: %v", p.id, time.Since(start).Round(time.Millisecond))
}
