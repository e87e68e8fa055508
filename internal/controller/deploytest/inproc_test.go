package deploytest

import (
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/nqos/nqos/internal/controller/app"
	"github.com/nqos/nqos/internal/ovnnb/nbtest"
	"github.com/nqos/nqos/internal/testenv"
)

func requireOVN(t testing.TB) {
	t.Helper()
	testenv.Binaries(t, "ovsdb-server", "ovsdb-tool", "ovn-nbctl")
	nbtest.Schema(t)
}

func startNB(t testing.TB) *nbtest.Server {
	t.Helper()
	requireOVN(t)
	return nbtest.Start(t)
}

// controllerFlags are the flags of a test controller: short leader
// election timings so takeovers happen within seconds.
func controllerFlags(kubeconfig, nbAddr string, extra ...string) []string {
	// The test cluster runs no OVN-Kubernetes, so none of its NetworkQoS.
	return append([]string{"--kubeconfig=" + kubeconfig, "--nb-address=" + nbAddr, "--loglevel=warn", "--ovnkube-enable-network-qos=false",
		"--leader-elect-lease-duration=" + leaseDuration.String(),
		"--leader-elect-renew-deadline=" + renewDeadline.String(),
		"--leader-elect-retry-period=" + retryPeriod.String()}, extra...)
}

// Leader election timings of the tests.
const (
	leaseDuration = 3 * time.Second
	renewDeadline = 2 * time.Second
	retryPeriod   = 500 * time.Millisecond
)

// startInProcess runs app.Run with args until the test ends; the run
// must end without an error when stopped.
func startInProcess(t testing.TB, args ...string) {
	t.Helper()
	o, err := app.Parse(args, testWriter{t})
	if err != nil {
		t.Fatalf("controller flags %v: %v", args, err)
	}
	log := slog.New(slog.NewTextHandler(testWriter{t}, &slog.HandlerOptions{Level: slog.LevelWarn}))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- app.Run(ctx, o, log) }()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("controller stopped with: %v", err)
			}
		case <-time.After(30 * time.Second):
			t.Errorf("controller did not stop within 30s")
		}
	})
}

// testWriter sends log lines to t.Log.
type testWriter struct{ t testing.TB }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}
