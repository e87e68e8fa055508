package ovntrace

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/nqos/nqos/internal/ovninstall"
	"github.com/nqos/nqos/internal/testenv"
)

// central is a private OVN central for one test: NB and SB ovsdb-server
// and ovn-northd, each a child process of the test with its files in a
// run-ID-named temp directory, all stopped by t.Cleanup.
type central struct {
	dir   string
	runID string
}

const readyTimeout = 15 * time.Second

// startCentral starts a central of OVN install inst, whose programs must
// be the ones on PATH (ovninstall.ForEach arranges that).
func startCentral(t testing.TB, inst ovninstall.Install) *central {
	t.Helper()
	testenv.Binaries(t, "ovsdb-server", "ovsdb-tool", "ovn-northd", "ovn-nbctl", "ovn-trace")
	testenv.Files(t, inst.NBSchema(), inst.SBSchema())
	b := make([]byte, 4)
	if _, err := rand.Read(b); err != nil {
		t.Fatalf("run id: %v", err)
	}
	runID := hex.EncodeToString(b)
	// Not t.TempDir(): unix socket paths are limited to 107 bytes.
	dir, err := os.MkdirTemp("", "nqos-ovntrace-"+runID+"-")
	if err != nil {
		t.Fatalf("central %s: %v", runID, err)
	}
	c := &central{dir: dir, runID: runID}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("central %s: kept %s (nb.log, sb.log, northd.log)", runID, dir)
			return
		}
		_ = os.RemoveAll(dir)
	})
	for _, db := range []struct{ name, schema string }{{"nb", inst.NBSchema()}, {"sb", inst.SBSchema()}} {
		file := filepath.Join(dir, db.name+".db")
		if out, err := exec.Command("ovsdb-tool", "create", file, db.schema).CombinedOutput(); err != nil {
			t.Fatalf("central %s: ovsdb-tool create %s: %v: %s", runID, file, err, out)
		}
		c.daemon(t, db.name, "ovsdb-server", file, "--remote=punix:"+c.sock(db.name))
		c.waitSocket(t, c.sock(db.name))
	}
	c.daemon(t, "northd", "ovn-northd", "--ovnnb-db="+c.nbAddr(), "--ovnsb-db="+c.sbAddr())
	c.nbctl(t, "init")
	return c
}

func (c *central) sock(name string) string { return filepath.Join(c.dir, name+".sock") }
func (c *central) nbAddr() string          { return "unix:" + c.sock("nb") }
func (c *central) sbAddr() string          { return "unix:" + c.sock("sb") }

// daemon starts a foreground daemon with its own pidfile, unixctl socket
// and log in the run directory, and stops it in t.Cleanup.
func (c *central) daemon(t testing.TB, name, bin string, args ...string) {
	t.Helper()
	args = append(args, "--pidfile="+filepath.Join(c.dir, name+".pid"),
		"--unixctl="+filepath.Join(c.dir, name+".ctl"),
		"--log-file="+filepath.Join(c.dir, name+".log"), "--no-chdir")
	cmd := exec.Command(bin, args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	// The daemon dies with the test binary even if cleanups never run.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		t.Fatalf("central %s: start %s: %v", c.runID, bin, err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
		if t.Failed() && stderr.Len() > 0 {
			t.Logf("central %s: %s stderr: %s", c.runID, bin, stderr.String())
		}
	})
}

// waitSocket polls until a unix socket accepts connections.
func (c *central) waitSocket(t testing.TB, path string) {
	t.Helper()
	deadline := time.Now().Add(readyTimeout)
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for {
		conn, err := net.Dial("unix", path)
		if err == nil {
			_ = conn.Close()
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("central %s: %s not accepting after %s: %v", c.runID, path, readyTimeout, err)
		}
		<-tick.C
	}
}

// nbctl runs one ovn-nbctl invocation; commands are separated by "--".
func (c *central) nbctl(t testing.TB, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	all := append([]string{"--db=" + c.nbAddr(), "--timeout=30"}, args...)
	out, err := exec.CommandContext(ctx, "ovn-nbctl", all...).CombinedOutput()
	if err != nil {
		t.Fatalf("central %s: ovn-nbctl %s: %v: %s", c.runID, strings.Join(args, " "), err, out)
	}
	return string(out)
}
