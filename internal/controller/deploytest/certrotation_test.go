package deploytest

import (
	"context"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nqos/nqos/internal/ovnnb/nbtest"
	"github.com/nqos/nqos/internal/poll"
)

// The Northbound's certificates and CA are rotated under a running
// controller (built binary, ssl: NB): the server restarts with a new CA
// and certificate that trust only the new CA, so the controller's old
// files cannot reconnect (/readyz 503 naming the Northbound); once the
// client certificate, key and CA files are replaced in place, as a
// renewed Secret is, the next reconnect uses them without a restart:
// /readyz 200 and a change made afterwards is applied.
func TestCertRotationReconnects(t *testing.T) {
	srv := the.cluster.get(t)
	bin := the.binary.get(t)
	dir := t.TempDir()
	live := filepath.Join(dir, "live")
	if err := os.Mkdir(live, 0o700); err != nil {
		t.Fatal(err)
	}
	oldCA := newCA(t, dir, "old")
	cliCert, cliKey := oldCA.issue(t, dir, "nqos-client-old", false)
	install(t, live, cliCert, cliKey, oldCA.file)
	nb := nbtest.StartSSL(t, oldCA.serverTLS(t, dir, "ovnnb-server-old"))
	w := newWorld(t, srv, nb)
	w.create(w.okepDocs()...)
	w.prepareNB(w.desired(), w.lsp("virt-launcher-late"))
	p := startProc(t, bin, "replica-tls", nil, controllerFlags(srv.KubeconfigPath(), nb.SSLAddr(),
		"--nb-client-privkey="+filepath.Join(live, "tls.key"), "--nb-client-cert="+filepath.Join(live, "tls.crt"),
		"--nb-client-cacert="+filepath.Join(live, "ca.crt"), "--nb-cert-common-name=ovnnb")...)
	j := rowsJudge(w)
	if check, err := j.wait(checkRows, j.rows); err != nil {
		t.Fatalf("before the rotation: %s: %v", check, err)
	}
	waitReadyz(t, p, "/readyz 200 before the rotation", func(code int, _ string) bool { return code == http.StatusOK })

	newCA := newCA(t, dir, "new")
	nb.RestartSSL(newCA.serverTLS(t, dir, "ovnnb-server-new"))
	waitReadyz(t, p, "/readyz 503 while the old files cannot reconnect", func(code int, body string) bool {
		return code == http.StatusServiceUnavailable && strings.Contains(body, "Northbound")
	})
	cliCert, cliKey = newCA.issue(t, dir, "nqos-client-new", false)
	rotated := time.Now()
	install(t, live, cliCert, cliKey, newCA.file)
	waitReadyz(t, p, "/readyz 200 after the files were replaced", func(code int, _ string) bool { return code == http.StatusOK })
	t.Logf("files replaced to ready again: %v", time.Since(rotated).Round(time.Millisecond))
	j.latePod(t, "tier: staging", "after the rotation")
	select {
	case <-p.done:
		t.Fatal("the controller restarted or exited during the rotation")
	default:
	}
}

// install copies a client certificate, key and CA into dir as tls.crt,
// tls.key and ca.crt, each replaced by a rename (a reader never sees a
// half-written file).
func install(t testing.TB, dir, cert, key, ca string) {
	t.Helper()
	for dst, src := range map[string]string{"tls.crt": cert, "tls.key": key, "ca.crt": ca} {
		raw, err := os.ReadFile(src)
		if err != nil {
			t.Fatal(err)
		}
		tmp := filepath.Join(dir, "."+dst+".tmp")
		if err := os.WriteFile(tmp, raw, 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(tmp, filepath.Join(dir, dst)); err != nil {
			t.Fatal(err)
		}
	}
}

// waitReadyz polls p's /readyz until ok holds (30 s).
func waitReadyz(t testing.TB, p *proc, what string, ok func(int, string) bool) {
	t.Helper()
	err := poll.Until(context.Background(), 30*time.Second, 50*time.Millisecond, what, func(ctx context.Context) (bool, error) {
		code, body, err := p.readyz(ctx)
		if err != nil {
			return false, poll.Retry("%v", err)
		}
		if !ok(code, body) {
			return false, poll.Retry("/readyz %d %q", code, body)
		}
		return true, nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
