package nbtest

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/nqos/nqos/internal/ovnnb"
	"github.com/nqos/nqos/internal/poll"
)

// The localnet network and switch of a Fixture.
const (
	FixtureNet    = "tenantblue"
	FixtureSwitch = "tenantblue_ovn_localnet_switch"
)

// WaitDeadline bounds each Fixture.WaitUntil.
const WaitDeadline = 20 * time.Second

// Fixture is a real NB ovsdb-server with one localnet switch
// (FixtureSwitch) and ports on it, and an ovnnb.Client connected to it.
type Fixture struct {
	T   testing.TB
	Srv *Server
	C   *ovnnb.Client
	// Ctx ends after the Fixture's timeout or with the test.
	Ctx context.Context
}

// NewFixture starts the server, adds the switch and ports, dials a
// client logging to log (nil for none) and waits until the client's
// cache holds every port. Everything stops with the test.
func NewFixture(t testing.TB, timeout time.Duration, log *slog.Logger, ports ...string) *Fixture {
	t.Helper()
	srv := Start(t)
	srv.MustNBCtl("ls-add", FixtureSwitch)
	srv.MustAddPorts(t, FixtureSwitch, ports...)
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	t.Cleanup(cancel)
	c, err := ovnnb.Dial(ctx, srv.Addr(), log)
	if err != nil {
		t.Fatalf("Dial: %v", err)
	}
	t.Cleanup(c.Close)
	f := &Fixture{T: t, Srv: srv, C: c, Ctx: ctx}
	for _, p := range ports {
		f.WaitUntil("port "+p+" in the client's cache", func() (bool, error) { return c.HasPort(p), nil })
	}
	return f
}

// WaitUntil polls cond until it holds, for at most WaitDeadline; an
// error from cond fails the test at once.
func (f *Fixture) WaitUntil(what string, cond func() (bool, error)) {
	f.T.Helper()
	if err := poll.Until(f.Ctx, WaitDeadline, 5*time.Millisecond, what, func(context.Context) (bool, error) { return cond() }); err != nil {
		f.T.Fatal(err)
	}
}

// Apply is the client's Apply of want under key; an error fails the test.
func (f *Fixture) Apply(key ovnnb.Key, want ovnnb.ObjectRows) ovnnb.ApplyResult {
	f.T.Helper()
	res, err := f.C.Apply(f.Ctx, key, want)
	if err != nil {
		f.T.Fatalf("Apply(%s): %v", key, err)
	}
	return res
}

// FixtureObject builds the rows a NetworkQoS on the Fixture's network
// owns (Object on FixtureNet and FixtureSwitch).
func FixtureObject(key ovnnb.Key, priority int, ports []string, rules ...Rule) ovnnb.ObjectRows {
	return Object(FixtureNet, FixtureSwitch, key, priority, ports, rules...)
}

// ApplyGold applies the object most tests start from, namespace ns's
// "gold": port p1 in its group and one rule (DSCP 46) at priority 60. It
// returns the object's key and rows.
func (f *Fixture) ApplyGold(ns string) (ovnnb.Key, ovnnb.ObjectRows) {
	f.T.Helper()
	key := ovnnb.Key{Namespace: ns, Name: "gold"}
	rows := FixtureObject(key, 60, []string{"p1"}, Rule{DSCP: 46})
	f.Apply(key, rows)
	return key, rows
}
