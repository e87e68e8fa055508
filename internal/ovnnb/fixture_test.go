package ovnnb_test

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/nqos/nqos/internal/ovnnb"
	"github.com/nqos/nqos/internal/ovnnb/nbtest"
	"github.com/nqos/nqos/internal/poll"
	"github.com/nqos/nqos/internal/qos"
)

const (
	testNet    = "tenantblue"
	testSwitch = "tenantblue_ovn_localnet_switch"
	deadline   = 20 * time.Second
)

// fixture is a real NB ovsdb-server with one localnet switch and ports,
// and a Client connected to it.
type fixture struct {
	t   testing.TB
	srv *nbtest.Server
	c   *ovnnb.Client
	ctx context.Context
	// syncs counts nbctlSynced markers.
	syncs int
}

func newFixture(t testing.TB, ports ...string) *fixture {
	t.Helper()
	srv := nbtest.Start(t)
	srv.MustNBCtl("ls-add", testSwitch)
	srv.MustAddPorts(t, testSwitch, ports...)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	c, err := ovnnb.Dial(ctx, srv.Addr(), log)
	if err != nil {
		t.Fatalf("Dial: %v", err)
	}
	t.Cleanup(c.Close)
	f := &fixture{t: t, srv: srv, c: c, ctx: ctx}
	for _, p := range ports {
		f.waitPort(p)
	}
	return f
}

// nbctlSynced runs ovn-nbctl with args and waits until the client's
// cache holds what it committed: ovn-nbctl returns once the server
// committed, before the client's monitor necessarily received the
// update. A marker switch added in the same transaction reaches the
// cache in the same update as everything else.
func (f *fixture) nbctlSynced(args ...string) {
	f.t.Helper()
	f.syncs++
	marker := fmt.Sprintf("nbsync%d", f.syncs)
	f.srv.MustNBCtl(append(args, "--", "ls-add", marker)...)
	f.waitUntil("switch "+marker+" in the client's cache", func() bool { return f.c.HasSwitch(marker) })
}

// waitPort polls the client's cache for an LSP, with a deadline.
func (f *fixture) waitPort(name string) {
	f.t.Helper()
	f.waitUntil("port "+name+" in cache", func() bool { return f.c.HasPort(name) })
}

func (f *fixture) waitUntil(what string, cond func() bool) {
	f.t.Helper()
	err := poll.Until(f.ctx, deadline, 5*time.Millisecond, what, func(context.Context) (bool, error) { return cond(), nil })
	if err != nil {
		f.t.Fatal(err)
	}
}

func (f *fixture) apply(key ovnnb.Key, want ovnnb.ObjectRows) ovnnb.ApplyResult {
	f.t.Helper()
	res, err := f.c.Apply(f.ctx, key, want)
	if err != nil {
		f.t.Fatalf("Apply(%s): %v", key, err)
	}
	return res
}

// rule is one egress rule of a test object.
type rule = nbtest.Rule

// object builds the rows a NetworkQoS on the test network owns.
func object(key ovnnb.Key, priority int, ports []string, rules ...rule) ovnnb.ObjectRows {
	return nbtest.Object(testNet, testSwitch, key, priority, ports, rules...)
}

// destSet adds a destination address set for rule i and returns its name.
func destSet(key ovnnb.Key, rows *ovnnb.ObjectRows, i int, addrs ...string) string {
	return nbtest.DestSet(testNet, key, rows, i, addrs...)
}

func ids(key ovnnb.Key, id string) map[string]string { return nbtest.IDs(testNet, key, id) }

func hashName(s string) string { return nbtest.HashName(s) }

func portNames(prefix string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("%s_vm%03d", prefix, i)
	}
	return out
}

// nbState is the whole NB as ovn-nbctl --format=json reports it.
type nbState struct {
	QoS      []nbtest.QoS
	PGs      []nbtest.PortGroup
	ASes     []nbtest.AddressSet
	Switches []nbtest.LogicalSwitch
	Ports    map[string]string // uuid -> name
}

func (f *fixture) state() nbState {
	f.t.Helper()
	var s nbState
	var err error
	check := func(e error) {
		if e != nil && err == nil {
			err = e
		}
	}
	s.QoS, err = f.srv.ListQoS()
	var e error
	s.PGs, e = f.srv.ListPortGroups()
	check(e)
	s.ASes, e = f.srv.ListAddressSets()
	check(e)
	s.Switches, e = f.srv.ListSwitches()
	check(e)
	ports, e := f.srv.ListPorts()
	check(e)
	if err != nil {
		f.t.Fatalf("read NB with ovn-nbctl: %v", err)
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
	steps := append([]namedStep{{"apply", func() error { _, err := f.c.Apply(f.ctx, key, v1); return err }}}, middle...)
	steps = append(steps, namedStep{"change", func() error { _, err := f.c.Apply(f.ctx, key, v2); return err }},
		namedStep{"teardown", func() error { return f.c.Teardown(f.ctx, key) }})
	for _, st := range steps {
		if err := st.do(); err != nil {
			t.Fatalf("%s: %v", st.name, err)
		}
		check(st.name)
	}
}
