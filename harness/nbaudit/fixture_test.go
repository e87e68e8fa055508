package nbaudit_test

import (
	"context"
	"fmt"
	"hash/fnv"
	"maps"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/nqos/nqos/harness/nbaudit"
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
	for start := 0; start < len(ports); start += 200 {
		var args []string
		for _, p := range ports[start:min(start+200, len(ports))] {
			args = append(args, "--", "lsp-add", testSwitch, p)
		}
		srv.MustNBCtl(args...)
	}
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
type rule struct {
	dscp        int
	rate, burst uint32
}

// object builds the rows of a NetworkQoS selecting ports, one QoS row per
// rule, named and marked as the controller marks them.
func object(key ovnnb.Key, priority int, ports []string, rules ...rule) ovnnb.ObjectRows {
	objID := testNet + "-network-controller:NetworkQoS:" + key.Namespace + ":" + key.Name
	pg := hashName(objID)
	rows := ovnnb.ObjectRows{PortGroups: []qos.PortGroup{{Name: pg, Ports: ports, ExternalIDs: ids(key, objID)}}}
	for i, r := range rules {
		ext := ids(key, objID+":"+strconv.Itoa(i))
		ext[qos.RuleIndexKey] = strconv.Itoa(i)
		row := qos.QoSRow{Switch: testSwitch, Direction: qos.DirectionToLport, Priority: 10000 + priority*10 + i,
			Match: "inport == @" + pg + " && (ip4 || ip6)", Action: qos.Action{DSCP: r.dscp}, ExternalIDs: ext}
		if r.rate > 0 || r.burst > 0 {
			row.Bandwidth = &qos.Bandwidth{Rate: r.rate, Burst: r.burst}
		}
		rows.QoS = append(rows.QoS, row)
	}
	return rows
}

// destSet adds a destination address set for rule i to the rule's match.
func destSet(key ovnnb.Key, rows *ovnnb.ObjectRows, i int, addrs ...string) string {
	id := fmt.Sprintf("%s-network-controller:NetworkQoS:%s:%s:%d:0:v4", testNet, key.Namespace, key.Name, i)
	ext := ids(key, id)
	ext[qos.RuleIndexKey], ext[qos.IPBlockIndexKey], ext[qos.IPFamilyKey] = strconv.Itoa(i), "0", "v4"
	name := hashName(id)
	rows.AddressSets = append(rows.AddressSets, qos.AddressSet{Name: name, Addresses: addrs, ExternalIDs: ext})
	rows.QoS[i].Match += " && ip4.dst == {$" + name + "}"
	return name
}

func ids(key ovnnb.Key, id string) map[string]string {
	return map[string]string{
		qos.OwnerControllerKey: testNet + "-network-controller",
		qos.OwnerTypeKey:       qos.OwnerType,
		qos.ObjectNameKey:      key.Namespace + ":" + key.Name,
		qos.PrimaryIDKey:       id,
		qos.NetworkKey:         testNet,
	}
}

func hashName(s string) string {
	h := fnv.New64a()
	_, _ = h.Write([]byte(s))
	return "a" + strconv.FormatUint(h.Sum64(), 10)
}

// extArgs spells external_ids for ovn-nbctl create/set.
func extArgs(ext map[string]string) []string {
	var out []string
	for _, k := range slices.Sorted(maps.Keys(ext)) {
		out = append(out, fmt.Sprintf(`external_ids:"%s"="%s"`, k, ext[k]))
	}
	return out
}

func quote(s string) string { return `"` + s + `"` }
