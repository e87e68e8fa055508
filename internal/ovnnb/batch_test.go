package ovnnb_test

import (
	"fmt"
	"maps"
	"reflect"
	"strings"
	"testing"

	"github.com/nqos/nqos/internal/ovnnb"
)

// batchObjects builds n objects over ports, each with two rules and a
// destination address set on rule 1.
func batchObjects(n int, ports []string) []ovnnb.KeyedRows {
	objs := make([]ovnnb.KeyedRows, n)
	for i := range objs {
		key := ovnnb.Key{Namespace: fmt.Sprintf("ns%02d", i%7), Name: fmt.Sprintf("q%03d", i)}
		rows := object(key, i%100, []string{ports[i%len(ports)], ports[(i+1)%len(ports)]}, rule{DSCP: 46}, rule{DSCP: 10})
		destMatch(key, &rows, 1, fmt.Sprintf("198.51.100.%d", i%250))
		objs[i] = ovnnb.KeyedRows{Key: key, Rows: rows}
	}
	return objs
}

// TestApplyBatch: 250 objects reach the NB in three bounded transactions
// (100, 100, 50 objects) with no committed state holding a dangling
// reference, exactly as Apply would write them; a second ApplyBatch is no
// transaction; an object that cannot be planned is left out, named, and
// the others are applied.
func TestApplyBatch(t *testing.T) {
	ports := portNames("ns.net_ns", 20)
	f := newFixture(t, ports...)
	objs := batchObjects(250, ports)
	w := watchRefs(t, f.Srv)
	res, err := f.C.ApplyBatch(f.Ctx, objs)
	if err != nil {
		t.Fatalf("ApplyBatch: %v", err)
	}
	if res.Transactions != 3 || len(res.Failed) != 0 || len(res.Results) != 250 {
		t.Fatalf("ApplyBatch = %d transactions, %d failed %v, %d results; want 3, 0, 250", res.Transactions, len(res.Failed), res.Failed, len(res.Results))
	}
	w.until(t, "250 objects", func() bool { return len(w.qos) == 500 })
	if len(w.txs) != 3 {
		t.Fatalf("monitor saw %d transactions, want 3", len(w.txs))
	}
	for i, want := range []int{100, 100, 50} {
		if got := w.txs[i]["Port_Group insert"]; got != want || w.txs[i]["QoS insert"] != 2*want {
			t.Errorf("transaction %d = %v, want %d port groups and %d QoS rows", i+1, w.txs[i], want, 2*want)
		}
	}
	s := f.state()
	for _, o := range objs {
		if !res.Results[o.Key].Changed {
			t.Errorf("%s: not Changed", o.Key)
		}
		if d := diffApplied(s, o.Key, o.Rows); len(d) > 0 {
			t.Fatalf("%s differs from its want:\n  %s", o.Key, strings.Join(d, "\n  "))
		}
	}
	f.requireConsistent()

	again, err := f.C.ApplyBatch(f.Ctx, objs)
	if err != nil || again.Transactions != 0 {
		t.Fatalf("second ApplyBatch = %d transactions, %v; want none", again.Transactions, err)
	}

	// A foreign port group in the way of one new object: it alone fails.
	extra := batchObjects(253, ports)[250:]
	f.nbctlSynced("pg-add", extra[1].Rows.PortGroups[0].Name)
	res, err = f.C.ApplyBatch(f.Ctx, extra)
	if err != nil || res.Transactions != 1 || len(res.Failed) != 1 || res.Failed[extra[1].Key] == nil {
		t.Fatalf("ApplyBatch with a foreign row = %+v, %v; want one transaction and only %s failed", res, err, extra[1].Key)
	}
	t.Logf("left out: %v", res.Failed[extra[1].Key])
	s = f.state()
	for i, o := range extra {
		want := o.Rows
		if i == 1 {
			want = ovnnb.ObjectRows{}
		}
		if d := diffCounts(s, o.Key, want); len(d) > 0 {
			t.Errorf("%s: %v", o.Key, d)
		}
	}
}

// TestTeardownBatchOrder: tearing down many objects at once keeps
// Teardown's order inside the batch: the first transaction deletes every
// QoS row of the chunk and no group or set, the second every port group
// and address set; no committed state has a dangling reference.
func TestTeardownBatchOrder(t *testing.T) {
	ports := portNames("ns.net_ns", 10)
	f := newFixture(t, ports...)
	objs := batchObjects(120, ports)
	if _, err := f.C.ApplyBatch(f.Ctx, objs); err != nil {
		t.Fatalf("ApplyBatch: %v", err)
	}
	w := watchRefs(t, f.Srv)
	keys := make([]ovnnb.Key, len(objs))
	for i, o := range objs {
		keys[i] = o.Key
	}
	n, err := f.C.TeardownBatch(f.Ctx, keys)
	if err != nil || n != 4 {
		t.Fatalf("TeardownBatch = %d transactions, %v; want 4 (two per chunk of 100)", n, err)
	}
	w.until(t, "teardown", func() bool {
		return len(w.qos) == 0 && len(w.names["Port_Group"]) == 0 && len(w.names["Address_Set"]) == 0
	})
	want := []map[string]int{
		{"QoS delete": 200}, {"Port_Group delete": 100, "Address_Set delete": 100},
		{"QoS delete": 40}, {"Port_Group delete": 20, "Address_Set delete": 20},
	}
	if len(w.txs) != len(want) {
		t.Fatalf("monitor saw transactions %v, want %v", w.txs, want)
	}
	for i := range want {
		if !maps.Equal(w.txs[i], want[i]) {
			t.Errorf("transaction %d = %v, want %v", i+1, w.txs[i], want[i])
		}
	}
	if keys := f.ownedKeys(); len(keys) != 0 {
		t.Fatalf("owned rows left: %v", keys)
	}
}

// TestMigrateLegacyBatchOrder: the three legacy rows of one object are
// migrated in one batch: transaction 1 creates the port group once and
// rewrites every match, deleting nothing; transaction 2 then deletes the
// two legacy source sets (one shared by two rows), never earlier. No
// committed state has a dangling reference.
func TestMigrateLegacyBatchOrder(t *testing.T) {
	f := newFixture(t, "p1", "p2")
	key := ovnnb.Key{Namespace: "ns1", Name: "gold"}
	l := seedLegacy(f, key)
	w := watchRefs(t, f.Srv)
	pg := object(key, 60, []string{"p1", "p2"}).PortGroups[0]
	var ms []ovnnb.Migration
	for _, r := range f.legacyRows() {
		ms = append(ms, ovnnb.Migration{Row: r, PortGroup: pg})
	}
	res, err := f.C.MigrateLegacyBatch(f.Ctx, ms)
	if err != nil || len(res.Failed) != 0 || res.Transactions != 2 {
		t.Fatalf("MigrateLegacyBatch = %+v, %v; want 2 transactions, none failed", res, err)
	}
	var deleted []string
	for _, m := range ms {
		deleted = append(deleted, res.Results[m.Row.UUID].DeletedSets...)
	}
	if want := sortedCopy([]string{l.src4, l.src6}); !reflect.DeepEqual(sortedCopy(deleted), want) {
		t.Fatalf("deleted sets %v, want %v once each", deleted, want)
	}
	w.until(t, "source sets deleted", func() bool { return len(w.names["Address_Set"]) == 2 })
	want := []map[string]int{{"Port_Group insert": 1, "QoS modify": 3}, {"Address_Set delete": 2}}
	if len(w.txs) != 2 || !maps.Equal(w.txs[0], want[0]) || !maps.Equal(w.txs[1], want[1]) {
		t.Fatalf("transactions %v, want %v", w.txs, want)
	}
	f.requireConsistent()
	if again := f.legacyRows(); len(again) != 0 {
		t.Fatalf("LegacyRows after migration = %+v, want none", again)
	}
}
