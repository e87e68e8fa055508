package nbaudit_test

import (
	"context"
	"testing"
	"time"

	"github.com/nqos/nqos/harness/nbaudit"
	"github.com/nqos/nqos/internal/ovnnb"
	"github.com/nqos/nqos/internal/ovnnb/nbtest"
	"github.com/nqos/nqos/internal/poll"
)

const (
	testNet    = "tenantblue"
	testSwitch = "tenantblue_ovn_localnet_switch"
	deadline   = 20 * time.Second
)

// fixture is a real NB ovsdb-server with one localnet switch and ports,
// and an ovnnb.Client connected to it that writes the rows under audit.
type fixture struct {
	t   testing.TB
	srv *nbtest.Server
	c   *ovnnb.Client
	ctx context.Context
}

func newFixture(t testing.TB, ports ...string) *fixture {
	t.Helper()
	srv := nbtest.Start(t)
	srv.MustNBCtl("ls-add", testSwitch)
	srv.MustAddPorts(t, testSwitch, ports...)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	t.Cleanup(cancel)
	c, err := ovnnb.Dial(ctx, srv.Addr(), nil)
	if err != nil {
		t.Fatalf("Dial: %v", err)
	}
	t.Cleanup(c.Close)
	f := &fixture{t: t, srv: srv, c: c, ctx: ctx}
	for _, p := range ports {
		f.waitUntil("port "+p+" in the client's cache", func() (bool, error) { return c.HasPort(p), nil })
	}
	return f
}

// waitUntil polls cond with a deadline; an error from cond fails at once.
func (f *fixture) waitUntil(what string, cond func() (bool, error)) {
	f.t.Helper()
	if err := poll.Until(f.ctx, deadline, 5*time.Millisecond, what, func(context.Context) (bool, error) { return cond() }); err != nil {
		f.t.Fatal(err)
	}
}

func (f *fixture) apply(key ovnnb.Key, want ovnnb.ObjectRows) {
	f.t.Helper()
	if _, err := f.c.Apply(f.ctx, key, want); err != nil {
		f.t.Fatalf("Apply(%s): %v", key, err)
	}
}

// audit is nbaudit.Audit of the fixture's client; a failed read fails.
func (f *fixture) audit() []nbaudit.Violation {
	f.t.Helper()
	v, err := nbaudit.Audit(f.ctx, f.c)
	if err != nil {
		f.t.Fatal(err)
	}
	return v
}

// watch starts a watcher on its own connection; it ends with the test.
func (f *fixture) watch(opts nbaudit.Options) *nbaudit.Watcher {
	f.t.Helper()
	w := nbaudit.Watch(f.ctx, f.srv.Addr(), opts)
	f.t.Cleanup(func() { w.Stop() })
	if n := w.Checks(); n != 1 {
		f.t.Fatalf("Checks() right after Watch = %d, want 1 (the initial state)", n)
	}
	return w
}

// waitChecks waits until the watcher audited n states and returns when
// it saw that; every state up to the n-th was audited before then.
func (f *fixture) waitChecks(w *nbaudit.Watcher, n int) time.Time {
	f.t.Helper()
	f.waitUntil("watcher audits", func() (bool, error) { return w.Checks() >= n, nil })
	return time.Now()
}

// rule is one egress rule of a test object.
type rule = nbtest.Rule

// object builds the rows a NetworkQoS on the test network owns.
func object(key ovnnb.Key, priority int, ports []string, rules ...rule) ovnnb.ObjectRows {
	return nbtest.Object(testNet, testSwitch, key, priority, ports, rules...)
}

// destSet adds a destination address set to rule i's match.
func destSet(key ovnnb.Key, rows *ovnnb.ObjectRows, i int, addrs ...string) {
	name := nbtest.DestSet(testNet, key, rows, i, addrs...)
	rows.QoS[i].Match += " && ip4.dst == {$" + name + "}"
}

func extArgs(ext map[string]string) []string { return nbtest.ExtArgs(ext) }

func quote(s string) string { return `"` + s + `"` }
