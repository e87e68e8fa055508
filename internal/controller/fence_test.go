package controller

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/nqos/nqos/internal/ovnnb"
)

// An old leader and a new one with fences on one NB: the new one takes
// the fence at its start (and stops again, as a leader that went away);
// the old one's next transaction is refused by the NB, it stops at once
// (Run returns ErrFenced) and no transaction of it commits after the
// takeover; a later leader converges the NB.
func TestDeposedControllerIsFenced(t *testing.T) {
	e := newEnv(t)
	e.addPorts(e.lsp(nadName, "vm1"), e.lsp(nadName, "vm2"))
	old, oldDone, _ := e.launchFenced("replica-old")
	e.createNAD(nadName, e.net, "")
	e.createPod("vm1", "node-a", nadName, map[string]string{"tier": "gold"})
	e.createNQ(e.nqos("gold", 50, map[string]string{"tier": "gold"}, []string{e.net}, ruleSpec{dscp: 46}))
	e.waitRowsMatchCompiler("")
	e.eventually("old leader ready", 30*time.Second, func() (bool, string) { return old.NotReady() == nil, "" })

	newer, _, stopNewer := e.launchFenced("replica-new")
	e.eventually("new leader ready", 30*time.Second, func() (bool, string) { return newer.NotReady() == nil, "" })
	stopNewer()
	before, err := e.nb.Writers()
	must(e, err)
	if before["replica-old"] == 0 || before["replica-new"] != 1 {
		t.Fatalf("NB writers after the takeover = %v, want the old leader's and the new leader's fence", before)
	}

	e.createPod("vm2", "node-a", nadName, map[string]string{"tier": "gold"}) // the old leader wants to add it
	select {
	case err := <-oldDone:
		if !errors.Is(err, ovnnb.ErrFenced) {
			t.Fatalf("old leader's Run = %v, want ErrFenced", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("old leader still running 30s after the new leader took the fence")
	}
	if n := testutil.ToFloat64(old.metrics.nbErrors.WithLabelValues(nbErrFenced)); n < 1 {
		t.Errorf("old leader's nqos_nb_errors_total{kind=fenced} = %v, want >= 1 (its write was refused, not skipped)", n)
	}
	after, err := e.nb.Writers()
	must(e, err)
	if after["replica-old"] != before["replica-old"] {
		t.Errorf("NB transactions by writer: before %v, after %v: want the old leader's unchanged", before, after)
	}
	latest, _, _ := e.launchFenced("replica-latest")
	e.eventually("latest leader ready", 30*time.Second, func() (bool, string) { return latest.NotReady() == nil, "" })
	e.waitRowsMatchCompiler("")
	t.Logf("NB transactions by writer: after the takeover %v, after the old leader's attempt %v", before, after)
}

// launchFenced runs a controller that takes the NB fence as holder, on
// its own NB client naming holder in every transaction; done yields
// Run's error, stop cancels it and waits. It is stopped at test end.
func (e *env) launchFenced(holder string) (*Controller, <-chan error, func()) {
	e.t.Helper()
	nbc, err := ovnnb.DialWith(e.ctx, e.nb.Addr(), ovnnb.Options{ClientID: "nqos-controller " + holder}, slog.New(slog.DiscardHandler))
	must(e, err)
	c, err := New(Config{Kube: e.cfg, NB: nbc, Fence: holder,
		Log: slog.New(slog.NewTextHandler(testWriter{e.t}, &slog.HandlerOptions{Level: slog.LevelWarn}))})
	must(e, err)
	ctx, cancel := context.WithCancel(e.ctx)
	done := make(chan error, 1)
	ran := make(chan struct{})
	go func() {
		defer close(ran)
		done <- c.Run(ctx)
	}()
	var once sync.Once
	stop := func() {
		once.Do(func() {
			cancel()
			<-ran
			nbc.Close()
		})
	}
	e.t.Cleanup(stop)
	return c, done, stop
}

// A lost lease ends the work context at once; a SIGTERM (plain cancel)
// leaves it running for the drain.
func TestWorkContextDrainsOnlyOnShutdown(t *testing.T) {
	lease, loseLease := context.WithCancelCause(context.Background())
	work, stop := workContext(lease)
	defer stop()
	loseLease(ErrLeadershipLost)
	select {
	case <-work.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("work context alive 5s after the lease was lost")
	}
	term, sigterm := context.WithCancel(context.Background())
	work2, stop2 := workContext(term)
	sigterm()
	select {
	case <-work2.Done():
		t.Fatalf("work context ended within 500ms of SIGTERM (%v), want it to drain", context.Cause(work2))
	case <-time.After(500 * time.Millisecond):
	}
	stop2()
	if work2.Err() == nil {
		t.Fatal("work context alive after its cancel")
	}
}
