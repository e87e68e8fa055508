package ovnnb_test

import (
	"fmt"
	"log/slog"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/nqos/nqos/internal/ovnnb"
	"github.com/nqos/nqos/internal/ovnnb/nbtest"
	"github.com/nqos/nqos/internal/qos"
)

const (
	testNet    = nbtest.FixtureNet
	testSwitch = nbtest.FixtureSwitch
	deadline   = nbtest.WaitDeadline
)

// fixture is the shared NB fixture (nbtest.Fixture): a real NB
// ovsdb-server with one localnet switch and ports, and a Client
// connected to it.
type fixture struct {
	*nbtest.Fixture
	// syncs counts nbctlSynced markers.
	syncs int
}

func newFixture(t testing.TB, ports ...string) *fixture {
	t.Helper()
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	return &fixture{Fixture: nbtest.NewFixture(t, 2*time.Minute, log, ports...)}
}

// nbctlSynced runs ovn-nbctl with args and waits until the client's
// cache holds what it committed: ovn-nbctl returns once the server
// committed, before the client's monitor necessarily received the
// update. A marker switch added in the same transaction reaches the
// cache in the same update as everything else.
func (f *fixture) nbctlSynced(args ...string) {
	f.T.Helper()
	f.syncs++
	marker := fmt.Sprintf("nbsync%d", f.syncs)
	f.Srv.MustNBCtl(append(args, "--", "ls-add", marker)...)
	f.waitUntil("switch "+marker+" in the client's cache", func() bool { return f.C.HasSwitch(marker) })
}

// waitPort polls the client's cache for an LSP, with a deadline.
func (f *fixture) waitPort(name string) {
	f.T.Helper()
	f.waitUntil("port "+name+" in cache", func() bool { return f.C.HasPort(name) })
}

// waitUntil is WaitUntil of a condition that cannot fail.
func (f *fixture) waitUntil(what string, cond func() bool) {
	f.T.Helper()
	f.WaitUntil(what, func() (bool, error) { return cond(), nil })
}

// rule is one egress rule of a test object.
type rule = nbtest.Rule

// object builds the rows a NetworkQoS on the test network owns.
func object(key ovnnb.Key, priority int, ports []string, rules ...rule) ovnnb.ObjectRows {
	return nbtest.FixtureObject(key, priority, ports, rules...)
}

// destSet adds a destination address set for rule i and returns its name.
func destSet(key ovnnb.Key, rows *ovnnb.ObjectRows, i int, addrs ...string) string {
	return nbtest.DestSet(testNet, key, rows, i, addrs...)
}

func ids(key ovnnb.Key, id string) map[string]string { return nbtest.IDs(testNet, key, id) }

func hashName(s string) string { return nbtest.HashName(s) }

// destMatch adds a destination address set for rule i and narrows the
// rule's match to it.
func destMatch(key ovnnb.Key, rows *ovnnb.ObjectRows, i int, addrs ...string) {
	nbtest.DestMatch(key, rows, i, addrs...)
}

func portNames(prefix string, n int) []string { return nbtest.PortNames(prefix, n) }

// nbState is the whole NB as ovn-nbctl --format=json reports it.
type nbState struct {
	QoS      []nbtest.QoS
	PGs      []nbtest.PortGroup
	ASes     []nbtest.AddressSet
	Switches []nbtest.LogicalSwitch
	Ports    map[string]string // uuid -> name
}

func (f *fixture) state() nbState {
	f.T.Helper()
	var s nbState
	var err error
	check := func(e error) {
		if e != nil && err == nil {
			err = e
		}
	}
	s.QoS, err = f.Srv.ListQoS()
	var e error
	s.PGs, e = f.Srv.ListPortGroups()
	check(e)
	s.ASes, e = f.Srv.ListAddressSets()
	check(e)
	s.Switches, e = f.Srv.ListSwitches()
	check(e)
	ports, e := f.Srv.ListPorts()
	check(e)
	if err != nil {
		f.T.Fatalf("read NB with ovn-nbctl: %v", err)
	}
	s.Ports = map[string]string{}
	for _, p := range ports {
		s.Ports[p.UUID] = p.Name
	}
	return s
}

func (s nbState) qosByID(id string) (nbtest.QoS, bool) {
	for _, q := range s.QoS {
		if q.ExternalIDs[qos.PrimaryIDKey] == id {
			return q, true
		}
	}
	return nbtest.QoS{}, false
}

func (s nbState) pg(name string) (nbtest.PortGroup, bool) {
	for _, p := range s.PGs {
		if p.Name == name {
			return p, true
		}
	}
	return nbtest.PortGroup{}, false
}

func (s nbState) as(name string) (nbtest.AddressSet, bool) {
	for _, a := range s.ASes {
		if a.Name == name {
			return a, true
		}
	}
	return nbtest.AddressSet{}, false
}

// switchesOf names the switches whose qos_rules hold uuid.
func (s nbState) switchesOf(uuid string) []string {
	var out []string
	for _, ls := range s.Switches {
		for _, q := range ls.QoSRules {
			if q == uuid {
				out = append(out, ls.Name)
			}
		}
	}
	return out
}

func (s nbState) portNamesOf(pg nbtest.PortGroup) string {
	names := make([]string, 0, len(pg.Ports))
	for _, u := range pg.Ports {
		names = append(names, s.Ports[u])
	}
	return strings.Join(sortedCopy(names), ",")
}

// namedStep is one step of a test's object life.
type namedStep struct {
	name string
	do   func() error
}

// objectLife is the life of NetworkQoS key beside rows it must not
// touch: apply (two rules, a destination set), the middle steps, a
// change to one rule, teardown. After each step check(name) runs.
func (f *fixture) objectLife(t *testing.T, key ovnnb.Key, check func(step string), middle ...namedStep) {
	t.Helper()
	v1 := object(key, 60, []string{"p1", "p2"}, rule{DSCP: 46, Rate: 1000}, rule{DSCP: 10})
	destSet(key, &v1, 1, "198.51.100.1")
	v2 := object(key, 60, []string{"p2"}, rule{DSCP: 40})
	steps := append([]namedStep{{"apply", func() error { _, err := f.C.Apply(f.Ctx, key, v1); return err }}}, middle...)
	steps = append(steps, namedStep{"change", func() error { _, err := f.C.Apply(f.Ctx, key, v2); return err }},
		namedStep{"teardown", func() error { return f.C.Teardown(f.Ctx, key) }})
	for _, st := range steps {
		if err := st.do(); err != nil {
			t.Fatalf("%s: %v", st.name, err)
		}
		check(st.name)
	}
}
