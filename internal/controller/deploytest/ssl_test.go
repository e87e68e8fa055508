package deploytest

import (
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/nqos/nqos/internal/ovnnb"
	"github.com/nqos/nqos/internal/ovnnb/nbtest"
	"github.com/nqos/nqos/internal/poll"
)

// The controller reaches an ssl: Northbound with client certificates
// made here; a client certificate of another CA is refused by the server
// and a server certificate of another CA by the client, each with a
// clear error; after the NB restarts the controller reconnects and
// reconciles a change made after the restart.
func TestNorthboundOverSSL(t *testing.T) {
	srv := the.cluster.get(t)
	dir := t.TempDir()
	good := newCA(t, dir, "nb")
	other := newCA(t, dir, "other")
	cliCert, cliKey := good.issue(t, dir, "nqos-client", false)
	badCert, badKey := other.issue(t, dir, "stranger", false)
	nb := nbtest.StartSSL(t, good.serverTLS(t, dir, "ovnnb-server"))
	ctx := context.Background()

	for _, tc := range []struct {
		name, key, cert, ca string
		want                []string
		accepted            string
	}{
		{"client certificate of another CA", badKey, badCert, good.file,
			[]string{nb.SSLAddr(), "unknown certificate authority"}, "the NB accepted a client certificate from another CA"},
		{"server certificate of another CA", cliKey, cliCert, other.file,
			[]string{"certificate signed by unknown authority"}, "the client accepted a server certificate from another CA"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dctx, cancel := context.WithTimeout(ctx, 10*time.Second)
			defer cancel()
			c, err := ovnnb.DialWith(dctx, nb.SSLAddr(), ovnnb.Options{PrivateKey: tc.key, Certificate: tc.cert, CACert: tc.ca}, nil)
			if err == nil {
				c.Close()
				t.Fatal(tc.accepted)
			}
			t.Logf("refused: %v", err)
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not name %q", err, w)
				}
			}
		})
	}
	t.Run("missing key", func(t *testing.T) {
		_, err := ovnnb.DialWith(ctx, nb.SSLAddr(), ovnnb.Options{Certificate: cliCert, CACert: good.file}, slog.New(slog.DiscardHandler))
		if err == nil || !strings.Contains(err.Error(), "private key") {
			t.Errorf("ssl: without a key: err = %v, want one naming the private key", err)
		}
	})

	w := newWorld(t, srv, nb)
	w.create(w.okepDocs()...)
	w.prepareNB(w.desired(), w.lsp("virt-launcher-late"))
	startInProcess(t, controllerFlags(srv.KubeconfigPath(), nb.SSLAddr(),
		"--nb-client-privkey="+cliKey, "--nb-client-cert="+cliCert, "--nb-client-cacert="+good.file, "--nb-cert-common-name=ovnnb")...)
	j := rowsJudge(w)
	if check, err := j.wait(checkRows, j.rows); err != nil {
		t.Fatalf("over ssl: %s: %v", check, err)
	}
	nb.Restart()
	// The test's own reader reconnects too; its reads fail until then.
	err := poll.Until(ctx, 30*time.Second, 50*time.Millisecond, "test reader reconnected", func(ctx context.Context) (bool, error) {
		if _, err := j.nbc.Rows(ctx); err != nil {
			return false, poll.Retry("%v", err)
		}
		return true, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	j.latePod(t, "tier: staging", "after the NB restart")
}
