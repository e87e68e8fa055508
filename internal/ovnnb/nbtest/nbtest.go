// Package nbtest owns a throw-away OVN Northbound database for tests: a real
// ovsdb-server process serving the selected OVN install's Northbound schema
// (internal/ovninstall) on a unix socket in a per-run temporary directory,
// plus ovn-nbctl access to it.
package nbtest

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/nqos/nqos/internal/freeport"
	"github.com/nqos/nqos/internal/ovninstall"
	"github.com/nqos/nqos/internal/testenv"
)

// readyTimeout bounds how long Start and Restart wait for the server.
const readyTimeout = 15 * time.Second

// Server is a running ovsdb-server holding one OVN_Northbound database.
type Server struct {
	t     testing.TB
	dir   string
	db    string
	sock  string
	runID string
	// sslPort is the ssl: listener's port, "" for none.
	sslPort string
	mu      sync.Mutex
	tls     TLS
	cmd     *exec.Cmd
	exited  chan struct{}
}

// TLS names the files of an ssl: listener: the server's private key and
// certificate, and the CA that must have signed its clients' certificates.
type TLS struct {
	PrivateKey, Certificate, CACert string
}

// Start creates a fresh Northbound database and serves it. It gates the
// test through internal/testenv on ovsdb-server, ovsdb-tool, ovn-nbctl and
// the schema (skipped under -short or when missing, failed under CI),
// and registers a cleanup that stops the server and removes its files.
func Start(t testing.TB) *Server {
	t.Helper()
	return start(t, TLS{})
}

// StartSSL is Start with a second listener, ssl: on a free port of
// 127.0.0.1, that requires client certificates signed by tls.CACert.
// Addr stays the unix socket, for the test's own ovn-nbctl and readers.
func StartSSL(t testing.TB, tls TLS) *Server {
	t.Helper()
	return start(t, tls)
}

func start(t testing.TB, tls TLS) *Server {
	t.Helper()
	testenv.Binaries(t, "ovsdb-server", "ovsdb-tool", "ovn-nbctl")
	inst, _, err := ovninstall.Current(context.Background())
	testenv.Check(t, "nbtest: the selected OVN install", err)
	runID := newRunID(t)
	// A short directory under the system temp dir: unix socket paths are
	// limited to 107 bytes and t.TempDir() embeds the (long) test name.
	dir, err := os.MkdirTemp("", "nqos-nb-"+runID+"-")
	if err != nil {
		t.Fatalf("nbtest: temp dir: %v", err)
	}
	s := &Server{t: t, dir: dir, runID: runID,
		db: filepath.Join(dir, "nb.db"), sock: filepath.Join(dir, "nb.sock"), tls: tls}
	if tls != (TLS{}) {
		ports, err := freeport.Loopback(1)
		if err != nil {
			t.Fatalf("nbtest: %v", err)
		}
		s.sslPort = strconv.Itoa(ports[0])
	}
	t.Cleanup(func() {
		s.Stop()
		if !t.Failed() {
			_ = os.RemoveAll(dir)
			return
		}
		t.Logf("nbtest: kept %s for inspection (ovsdb-server.log)", dir)
	})
	out, err := exec.Command("ovsdb-tool", "create", s.db, inst.NBSchema()).CombinedOutput()
	if err != nil {
		t.Fatalf("nbtest: ovsdb-tool create %s: %v: %s", s.db, err, out)
	}
	if err := s.start(); err != nil {
		t.Fatalf("nbtest: %v", err)
	}
	if out, err := s.NBCtl("init"); err != nil {
		t.Fatalf("nbtest: ovn-nbctl init: %v: %s", err, out)
	}
	return s
}

func newRunID(t testing.TB) string {
	b := make([]byte, 4)
	if _, err := rand.Read(b); err != nil {
		t.Fatalf("nbtest: run id: %v", err)
	}
	return hex.EncodeToString(b)
}

// Addr is the libovsdb/ovn-nbctl address of the server ("unix:<path>").
func (s *Server) Addr() string { return "unix:" + s.sock }

// SSLAddr is the ssl: listener's address ("ssl:127.0.0.1:<port>"), ""
// for a server started without one.
func (s *Server) SSLAddr() string {
	if s.sslPort == "" {
		return ""
	}
	return "ssl:127.0.0.1:" + s.sslPort
}

// Dir is the server's working directory (database, socket, log).
func (s *Server) Dir() string { return s.dir }

// RunID is the random identifier in this server's directory name.
func (s *Server) RunID() string { return s.runID }

func (s *Server) start() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cmd != nil {
		return errors.New("ovsdb-server already running")
	}
	_ = os.Remove(s.sock)
	args := []string{s.db, "--remote=punix:" + s.sock}
	if s.sslPort != "" {
		args = append(args, "--remote=pssl:"+s.sslPort+":127.0.0.1",
			"--private-key="+s.tls.PrivateKey, "--certificate="+s.tls.Certificate, "--ca-cert="+s.tls.CACert)
	}
	cmd := exec.Command("ovsdb-server", append(args,
		"--unixctl="+filepath.Join(s.dir, "ovsdb-server.ctl"),
		"--log-file="+filepath.Join(s.dir, "ovsdb-server.log"),
		"--no-chdir", "-vconsole:off")...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	// Killed with the test binary even when a timeout skips t.Cleanup.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start ovsdb-server for %s: %w", s.db, err)
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	s.cmd, s.exited = cmd, exited
	return s.waitReady(exited, &stderr)
}

// waitReady polls the socket, and the ssl: port if there is one, until
// ovsdb-server accepts a connection on each.
func (s *Server) waitReady(exited <-chan struct{}, stderr *bytes.Buffer) error {
	ctx, cancel := context.WithTimeout(context.Background(), readyTimeout)
	defer cancel()
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	listeners := [][2]string{{"unix", s.sock}}
	if s.sslPort != "" {
		listeners = append(listeners, [2]string{"tcp", "127.0.0.1:" + s.sslPort})
	}
	var d net.Dialer
	for _, l := range listeners {
		for {
			conn, err := d.DialContext(ctx, l[0], l[1])
			if err == nil {
				_ = conn.Close()
				break
			}
			select {
			case <-exited:
				return fmt.Errorf("ovsdb-server for %s exited during start: %s", s.db, strings.TrimSpace(stderr.String()))
			case <-ctx.Done():
				return fmt.Errorf("ovsdb-server for %s not answering on %s: %w", s.db, l[1], err)
			case <-tick.C:
			}
		}
	}
	return nil
}

// Stop kills the server and waits for it; the database file stays.
func (s *Server) Stop() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cmd == nil {
		return
	}
	_ = s.cmd.Process.Kill()
	<-s.exited
	s.cmd, s.exited = nil, nil
}

// Restart stops the server and serves the same database file again, so
// clients see a dropped connection and the same data afterwards.
func (s *Server) Restart() {
	s.t.Helper()
	s.Stop()
	if err := s.start(); err != nil {
		s.t.Fatalf("nbtest: restart: %v", err)
	}
}

// RestartSSL is Restart with the ssl: listener serving other files (a
// rotated certificate or CA); the port stays.
func (s *Server) RestartSSL(tls TLS) {
	s.t.Helper()
	if s.sslPort == "" {
		s.t.Fatal("nbtest: RestartSSL of a server started without an ssl: listener")
	}
	s.mu.Lock()
	s.tls = tls
	s.mu.Unlock()
	s.Restart()
}

// NBCtl runs ovn-nbctl against this database and returns its stdout.
func (s *Server) NBCtl(args ...string) (string, error) {
	full := append([]string{"--db=" + s.Addr(), "--timeout=20"}, args...)
	cmd := exec.Command("ovn-nbctl", full...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return stdout.String(), fmt.Errorf("ovn-nbctl %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return stdout.String(), nil
}

// MustNBCtl is NBCtl that fails the test on error.
func (s *Server) MustNBCtl(args ...string) string {
	s.t.Helper()
	out, err := s.NBCtl(args...)
	if err != nil {
		s.t.Fatalf("nbtest: %v", err)
	}
	return out
}

// MustAddPorts adds ports to the logical switch sw, 200 to an ovn-nbctl
// call; a failure fails t (the calling test or subtest).
func (s *Server) MustAddPorts(t testing.TB, sw string, ports ...string) {
	t.Helper()
	const batch = 200
	for len(ports) > 0 {
		n := min(batch, len(ports))
		var args []string
		for _, p := range ports[:n] {
			args = append(args, "--", "lsp-add", sw, p)
		}
		if _, err := s.NBCtl(args...); err != nil {
			t.Fatalf("nbtest: %v", err)
		}
		ports = ports[n:]
	}
}

// Schema is the Northbound schema of the selected OVN install (NQOS_OVN),
// for tests that create an NB database of their own. It gates the test on
// that install (internal/testenv).
func Schema(t testing.TB) string {
	t.Helper()
	inst, _, err := ovninstall.Current(context.Background())
	testenv.Check(t, "nbtest: the selected OVN install", err)
	return inst.NBSchema()
}
