package ovnnb_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/nqos/nqos/internal/ovnnb"
	"github.com/nqos/nqos/internal/ovnnb/nbtest"
	"github.com/nqos/nqos/internal/ovsdbmon"
)

// refWatcher replays every committed transaction seen by an independent
// monitor connection and checks after each one that no QoS row references
// a missing port group or address set.
type refWatcher struct {
	m     *ovsdbmon.Monitor
	qos   map[string]string // uuid -> match
	names map[string]map[string]string
	seen  int
	// txs counts, per transaction after the initial state, the row
	// changes by "<table> <insert|modify|delete>".
	txs []map[string]int
}

func watchRefs(t *testing.T, srv *nbtest.Server) *refWatcher {
	w := &refWatcher{qos: map[string]string{}, names: map[string]map[string]string{
		"Port_Group": {}, "Address_Set": {}}}
	w.m = srv.Monitor(t, ovsdbmon.Columns{"QoS": {"match"}, "Port_Group": {"name"}, "Address_Set": {"name"}})
	if err := w.apply(w.m.Initial()); err != nil {
		t.Fatalf("initial state: %v", err)
	}
	return w
}

// apply folds one update into the state and checks the invariant.
func (w *refWatcher) apply(u ovsdbmon.Update) error {
	if w.seen > 0 {
		w.txs = append(w.txs, changeCounts(u))
	}
	for uuid, ru := range u["QoS"] {
		if ru.New == nil {
			delete(w.qos, uuid)
			continue
		}
		var match string
		if err := ovsdbmon.Decode(ru.New, "match", ovsdbmon.String, &match); err != nil {
			return fmt.Errorf("QoS %s: %w", uuid, err)
		}
		w.qos[uuid] = match
	}
	for _, table := range []string{"Port_Group", "Address_Set"} {
		for uuid, ru := range u[table] {
			if ru.New == nil {
				delete(w.names[table], uuid)
				continue
			}
			var name string
			if err := ovsdbmon.Decode(ru.New, "name", ovsdbmon.String, &name); err != nil {
				return fmt.Errorf("%s %s: %w", table, uuid, err)
			}
			w.names[table][uuid] = name
		}
	}
	w.seen++
	return w.check()
}

// changeCounts counts the row changes of one notification by table and
// operation.
func changeCounts(u ovsdbmon.Update) map[string]int {
	out := map[string]int{}
	for table, rows := range u {
		for _, ru := range rows {
			op := "modify"
			switch {
			case ru.Old == nil:
				op = "insert"
			case ru.New == nil:
				op = "delete"
			}
			out[table+" "+op]++
		}
	}
	return out
}

func (w *refWatcher) check() error {
	has := func(table, name string) bool {
		for _, n := range w.names[table] {
			if n == name {
				return true
			}
		}
		return false
	}
	for uuid, match := range w.qos {
		for _, pg := range nbtest.Refs(match, "@") {
			if !has("Port_Group", pg) {
				return fmt.Errorf("transaction %d: QoS %s references missing port group @%s", w.seen, uuid, pg)
			}
		}
		for _, as := range nbtest.Refs(match, "$") {
			if !has("Address_Set", as) {
				return fmt.Errorf("transaction %d: QoS %s references missing address set $%s", w.seen, uuid, as)
			}
		}
	}
	return nil
}

// until consumes updates (checking each) until done holds.
func (w *refWatcher) until(t *testing.T, what string, done func() bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), deadline)
	defer cancel()
	for !done() {
		n, err := w.m.Next(ctx)
		if err != nil {
			t.Fatalf("waiting for %s: %v", what, err)
		}
		if err := w.apply(n.Update); err != nil {
			t.Fatal(err)
		}
	}
}

// TestTeardownOrder: a watcher seeing every committed transaction never
// sees a QoS row whose @port group or $address set is gone, and the QoS
// rows disappear in an earlier transaction than the port group.
func TestTeardownOrder(t *testing.T) {
	ports := portNames("ns1.net1_ns1", 4)
	f := newFixture(t, ports...)
	key := ovnnb.Key{Namespace: "ns1", Name: "gold"}
	want := object(key, 60, ports, rule{DSCP: 46, Rate: 10000}, rule{DSCP: 10})
	destMatch(key, &want, 1, "198.51.100.1")
	pg := want.PortGroups[0].Name

	w := watchRefs(t, f.Srv)
	f.Apply(key, want)
	w.until(t, "rows applied", func() bool { return len(w.qos) == 2 })

	if err := f.C.Teardown(f.Ctx, key); err != nil {
		t.Fatalf("Teardown: %v", err)
	}
	var qosGoneAt, pgGoneAt int
	w.until(t, "teardown", func() bool {
		if qosGoneAt == 0 && len(w.qos) == 0 {
			qosGoneAt = w.seen
		}
		if pgGoneAt == 0 && len(w.names["Port_Group"]) == 0 && len(w.names["Address_Set"]) == 0 {
			pgGoneAt = w.seen
		}
		return qosGoneAt > 0 && pgGoneAt > 0
	})
	if !(qosGoneAt < pgGoneAt) {
		t.Fatalf("QoS rows gone in transaction %d, port group %s in %d: want QoS strictly first", qosGoneAt, pg, pgGoneAt)
	}
	if d := diffCounts(f.state(), key, ovnnb.ObjectRows{}); len(d) > 0 {
		t.Fatalf("teardown left rows: %v", d)
	}
	if err := f.C.Teardown(f.Ctx, key); err != nil {
		t.Fatalf("second Teardown: %v", err)
	}
}

// TestApplyShrinkIsAtomic: dropping a rule and its address set in one
// Apply is one transaction in which the set and its only reference go
// together.
func TestApplyShrinkIsAtomic(t *testing.T) {
	f := newFixture(t, "p1")
	key := ovnnb.Key{Namespace: "ns1", Name: "gold"}
	full := object(key, 60, []string{"p1"}, rule{DSCP: 46}, rule{DSCP: 10})
	destMatch(key, &full, 1, "198.51.100.1")
	f.Apply(key, full)
	w := watchRefs(t, f.Srv)
	f.Apply(key, object(key, 60, []string{"p1"}, rule{DSCP: 46}))
	w.until(t, "rule 1 removed", func() bool { return len(w.qos) == 1 && len(w.names["Address_Set"]) == 0 })
	if w.seen != 2 { // initial state + one transaction
		t.Fatalf("watcher saw %d states, want initial + 1 transaction", w.seen)
	}
}
