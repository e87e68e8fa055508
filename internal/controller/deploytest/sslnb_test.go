package deploytest

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/nqos/nqos/internal/ovnnb/nbtest"
	"github.com/nqos/nqos/internal/poll"
)

// sslNB is an ovsdb-server serving a fresh Northbound on ssl: (client
// certificates required, signed by the CA it is given) and on a unix
// socket for the test's own ovn-nbctl and reader.
type sslNB struct {
	t                   testing.TB
	dir, db, sock, port string
	cert, key, caCert   string
	cmd                 *exec.Cmd
	exited              chan struct{}
}

func startSSLNB(t testing.TB, cert, key, caCert string) *sslNB {
	t.Helper()
	requireOVN(t)
	dir, err := os.MkdirTemp("", "nqos-sslnb-")
	if err != nil {
		t.Fatal(err)
	}
	_, port, err := net.SplitHostPort(freeAddr(t))
	if err != nil {
		t.Fatal(err)
	}
	s := &sslNB{t: t, dir: dir, db: filepath.Join(dir, "nb.db"), sock: filepath.Join(dir, "nb.sock"), port: port,
		cert: cert, key: key, caCert: caCert}
	t.Cleanup(func() {
		s.stop()
		if t.Failed() {
			t.Logf("sslnb: kept %s (ovsdb-server.log)", dir)
			return
		}
		_ = os.RemoveAll(dir)
	})
	if out, err := exec.Command("ovsdb-tool", "create", s.db, nbtest.Schema(t)).CombinedOutput(); err != nil {
		t.Fatalf("ovsdb-tool create: %v: %s", err, out)
	}
	s.start()
	s.MustNBCtl("init")
	return s
}

// sslAddr is the address the controller uses.
func (s *sslNB) sslAddr() string { return "ssl:127.0.0.1:" + s.port }

// Addr is the unix address of the test's own reader.
func (s *sslNB) Addr() string { return "unix:" + s.sock }

func (s *sslNB) start() {
	s.t.Helper()
	_ = os.Remove(s.sock)
	s.cmd = exec.Command("ovsdb-server", s.db,
		"--remote=pssl:"+s.port+":127.0.0.1", "--remote=punix:"+s.sock,
		"--private-key="+s.key, "--certificate="+s.cert, "--ca-cert="+s.caCert,
		"--unixctl="+filepath.Join(s.dir, "ovsdb-server.ctl"),
		"--log-file="+filepath.Join(s.dir, "ovsdb-server.log"), "--no-chdir", "-vconsole:off")
	var stderr bytes.Buffer
	s.cmd.Stderr = &stderr
	s.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := s.cmd.Start(); err != nil {
		s.t.Fatalf("start ovsdb-server: %v", err)
	}
	exited := make(chan struct{})
	go func() { _ = s.cmd.Wait(); close(exited) }()
	s.exited = exited
	err := poll.Until(context.Background(), 15*time.Second, 10*time.Millisecond, "ovsdb-server listening on ssl and unix", func(ctx context.Context) (bool, error) {
		select {
		case <-exited:
			return false, fmt.Errorf("ovsdb-server exited: %s", stderr.String())
		default:
		}
		for _, a := range [][2]string{{"unix", s.sock}, {"tcp", "127.0.0.1:" + s.port}} {
			c, err := net.Dial(a[0], a[1])
			if err != nil {
				return false, poll.Retry("%s %s: %v", a[0], a[1], err)
			}
			_ = c.Close()
		}
		return true, nil
	})
	if err != nil {
		s.t.Fatal(err)
	}
}

// stop kills the server (the database file stays).
func (s *sslNB) stop() {
	if s.cmd == nil {
		return
	}
	_ = s.cmd.Process.Kill()
	<-s.exited
	s.cmd = nil
}

func (s *sslNB) MustNBCtl(args ...string) string {
	s.t.Helper()
	out, err := exec.Command("ovn-nbctl", append([]string{"--db=unix:" + s.sock, "--timeout=20"}, args...)...).CombinedOutput()
	if err != nil {
		s.t.Fatalf("ovn-nbctl %s: %v: %s", strings.Join(args, " "), err, out)
	}
	return string(out)
}
