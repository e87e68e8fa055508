package controller

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/nqos/nqos/internal/ovnnb"
)

// After startup the controller's readiness follows its Northbound: the
// NB going away makes NotReady name it, its return makes it ready again
// and a change made meanwhile is applied.
func TestReadinessFollowsNBAfterStartup(t *testing.T) {
	e := newEnv(t)
	c := e.goldVM()
	e.createNQ(e.nqos("gold", 50, map[string]string{"tier": "gold"}, []string{e.net}, ruleSpec{dscp: 46}))
	e.waitRowsMatchCompiler("")
	e.eventually("ready", 30*time.Second, func() (bool, string) { return c.NotReady() == nil, "" })
	e.nb.Stop()
	e.eventually("not ready naming the Northbound", 10*time.Second, func() (bool, string) {
		err := c.NotReady()
		return err != nil && strings.Contains(err.Error(), "Northbound disconnected"), "NotReady = " + errString(err)
	})
	e.updateEgress("gold", ruleSpec{dscp: 10})
	e.nb.Restart()
	e.eventually("ready again", 30*time.Second, func() (bool, string) {
		err := c.NotReady()
		return err == nil, "NotReady = " + errString(err)
	})
	e.waitRowsMatchCompiler("")
}

// A leader (fence set) whose Northbound stays down longer than
// NBLostTimeout stops with ErrNBUnreachable (so its lease is released);
// a zone controller (no fence) waits for the NB instead.
func TestLeaderStopsWhenNBUnreachable(t *testing.T) {
	e := newEnv(t)
	const lost = time.Second
	nbc, err := ovnnb.Dial(e.ctx, e.nb.Addr(), slog.New(slog.DiscardHandler))
	must(e, err)
	t.Cleanup(nbc.Close)
	leader, err := New(Config{Kube: e.cfg, NB: nbc, Fence: "replica-a", NBLostTimeout: lost})
	must(e, err)
	zoneNB := e.dial()
	zone, err := New(Config{Kube: e.cfg, NB: zoneNB, Node: "node-a", NBLostTimeout: lost})
	must(e, err)
	ctx, cancel := context.WithCancel(e.ctx)
	defer cancel()
	leaderDone, zoneDone := make(chan error, 1), make(chan error, 1)
	go func() { leaderDone <- leader.Run(ctx) }()
	go func() { zoneDone <- zone.Run(ctx) }()
	e.eventually("both ready", 30*time.Second, func() (bool, string) { return leader.NotReady() == nil && zone.NotReady() == nil, "" })
	e.nb.Stop()
	stopped := time.Now()
	select {
	case err := <-leaderDone:
		took := time.Since(stopped)
		if !errors.Is(err, ErrNBUnreachable) || took < lost || took > lost+5*time.Second {
			t.Fatalf("leader's Run = %v after %v, want ErrNBUnreachable after %v..%v", err, took, lost, lost+5*time.Second)
		}
		t.Logf("leader stopped %v after the NB went away (bound %v)", took.Round(time.Millisecond), lost)
	case <-time.After(lost + 10*time.Second):
		t.Fatal("leader still running with its NB down")
	}
	select {
	case err := <-zoneDone:
		t.Fatalf("zone controller stopped with its NB down: %v", err)
	default:
	}
	e.nb.Restart()
	cancel()
	if err := <-zoneDone; err != nil {
		t.Errorf("zone controller's Run after cancel = %v", err)
	}
}
