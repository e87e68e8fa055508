package nbaudit_test

import (
	"testing"
	"time"

	"github.com/nqos/nqos/harness/nbaudit"
	"github.com/nqos/nqos/internal/ovnnb"
	"github.com/nqos/nqos/internal/ovnnb/nbtest"
)

// The fixture's network and switch.
const (
	testNet    = nbtest.FixtureNet
	testSwitch = nbtest.FixtureSwitch
)

// fixture is nbtest's NB fixture (a real NB ovsdb-server with the
// localnet switch and ports, and an ovnnb.Client writing the rows under
// audit) with the audit and watch helpers of these tests.
type fixture struct{ *nbtest.Fixture }

func newFixture(t testing.TB, ports ...string) *fixture {
	t.Helper()
	return &fixture{nbtest.NewFixture(t, 5*time.Minute, nil, ports...)}
}

// audit is nbaudit.Audit of the fixture's client; a failed read fails.
func (f *fixture) audit() []nbaudit.Violation {
	f.T.Helper()
	v, err := nbaudit.Audit(f.Ctx, f.C)
	if err != nil {
		f.T.Fatal(err)
	}
	return v
}

// watch starts a watcher on its own connection; it ends with the test.
func (f *fixture) watch(opts nbaudit.Options) *nbaudit.Watcher {
	f.T.Helper()
	w := nbaudit.Watch(f.Ctx, f.Srv.Addr(), opts)
	f.T.Cleanup(func() { w.Stop() })
	if n := w.Checks(); n != 1 {
		f.T.Fatalf("Checks() right after Watch = %d, want 1 (the initial state)", n)
	}
	return w
}

// waitChecks waits until the watcher audited n states and returns when
// it saw that; every state up to the n-th was audited before then.
func (f *fixture) waitChecks(w *nbaudit.Watcher, n int) time.Time {
	f.T.Helper()
	f.WaitUntil("watcher audits", func() (bool, error) { return w.Checks() >= n, nil })
	return time.Now()
}

// rule is one egress rule of a test object.
type rule = nbtest.Rule

// object builds the rows a NetworkQoS on the test network owns.
func object(key ovnnb.Key, priority int, ports []string, rules ...rule) ovnnb.ObjectRows {
	return nbtest.FixtureObject(key, priority, ports, rules...)
}

// destSet adds a destination address set to rule i's match.
func destSet(key ovnnb.Key, rows *ovnnb.ObjectRows, i int, addrs ...string) {
	nbtest.DestMatch(key, rows, i, addrs...)
}

func extArgs(ext map[string]string) []string { return nbtest.ExtArgs(ext) }

func quote(s string) string { return `"` + s + `"` }
