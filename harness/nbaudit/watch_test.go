package nbaudit_test

import (
	"reflect"
	"testing"
	"time"

	"github.com/nqos/nqos/harness/nbaudit"
	"github.com/nqos/nqos/internal/ovnnb"
	"github.com/nqos/nqos/internal/qos"
)

// TestWatchSeesOneTransactionState commits, with two separate ovn-nbctl
// transactions, a state in which an owned QoS row references a deleted
// port group and then the fix (the group recreated). The broken state
// exists for exactly one transaction; the watcher must report it once,
// timed between the first commit and the moment it audited the fix, and
// the final state audits clean.
func TestWatchSeesOneTransactionState(t *testing.T) {
	f := newFixture(t, "p1", "p2")
	_, rows := f.ApplyGold("vms")
	w := f.watch(nbaudit.Options{})

	pg := rows.PortGroups[0]
	before := time.Now()
	f.Srv.MustNBCtl("pg-del", pg.Name)
	recreate := append([]string{"pg-add", pg.Name, "p1", "--", "set", "Port_Group", pg.Name}, extArgs(pg.ExternalIDs)...)
	f.Srv.MustNBCtl(recreate...)
	seen := f.waitChecks(w, 3)
	if n := w.Checks(); n != 3 {
		t.Fatalf("Checks() = %d after two transactions, want 3 (initial + one per transaction)", n)
	}
	if v := f.audit(); len(v) != 0 {
		t.Fatalf("final state is not clean: %+v", v)
	}

	got := w.Stop()
	want := nbaudit.Violation{Row: "QoS " + rows.QoS[0].ExternalIDs[qos.PrimaryIDKey],
		Problem: "match references missing port group @" + pg.Name}
	if len(got) != 1 || got[0].Violation != want {
		t.Fatalf("sightings = %+v\nwant exactly one: %+v", got, want)
	}
	if at := got[0].At; at.Before(before) || at.After(seen) {
		t.Fatalf("sighting at %s, want within [%s, %s]", at, before, seen)
	}
}

// TestWatchCleanTeardown: two objects (one with a destination address
// set) are torn down with the ordered Teardown while a watcher audits
// every committed state: no sighting at all, and it audited each of the
// four transactions.
func TestWatchCleanTeardown(t *testing.T) {
	f := newFixture(t, "p1", "p2", "p3")
	gold := ovnnb.Key{Namespace: "vms", Name: "gold"}
	backup := ovnnb.Key{Namespace: "vms", Name: "backup"}
	goldRows := object(gold, 60, []string{"p1", "p2"}, rule{DSCP: 46})
	backupRows := object(backup, 50, []string{"p3"}, rule{DSCP: 8, Rate: 100000, Burst: 100000})
	destSet(backup, &backupRows, 0, "10.20.0.0/16")
	f.Apply(gold, goldRows)
	f.Apply(backup, backupRows)
	w := f.watch(nbaudit.Options{})

	for _, k := range []ovnnb.Key{gold, backup} {
		if err := f.C.Teardown(f.Ctx, k); err != nil {
			t.Fatalf("Teardown(%s): %v", k, err)
		}
	}
	f.waitChecks(w, 1+4)
	if keys, err := f.C.OwnedKeys(f.Ctx); err != nil || len(keys) != 0 {
		t.Fatalf("owned rows left after teardown: %v (err %v)", keys, err)
	}
	if got := w.Stop(); len(got) != 0 {
		t.Fatalf("sightings during an ordered teardown = %+v, want none", got)
	}
	if n := w.Checks(); n != 5 {
		t.Fatalf("Checks() = %d, want 5 (initial + 2 per teardown)", n)
	}
}

// TestWatchRejected: rows owned by an object the caller says is rejected
// are violations, reported for each row; another object's rows are not.
func TestWatchRejected(t *testing.T) {
	f := newFixture(t, "p1", "p2")
	bad := ovnnb.Key{Namespace: "vms", Name: "x"}
	good := ovnnb.Key{Namespace: "vms", Name: "ok"}
	badRows := object(bad, 40, []string{"p1"}, rule{DSCP: 10})
	f.Apply(good, object(good, 60, []string{"p2"}, rule{DSCP: 46}))
	w := f.watch(nbaudit.Options{Rejected: func(k ovnnb.Key) bool { return k == bad }})

	before := time.Now()
	f.Apply(bad, badRows)
	if err := f.C.Teardown(f.Ctx, bad); err != nil {
		t.Fatalf("Teardown(%s): %v", bad, err)
	}
	seen := f.waitChecks(w, 1+3)
	got := w.Stop()
	qosRow := "QoS " + badRows.QoS[0].ExternalIDs[qos.PrimaryIDKey]
	pgRow := "Port_Group " + badRows.PortGroups[0].Name
	want := []nbaudit.Violation{
		{Row: pgRow, Problem: "rejected object vms/x owns " + pgRow},
		{Row: qosRow, Problem: "rejected object vms/x owns " + qosRow},
	}
	var gotV []nbaudit.Violation
	for _, s := range got {
		gotV = append(gotV, s.Violation)
		if s.At.Before(before) || s.At.After(seen) {
			t.Errorf("sighting %+v at %s, want within [%s, %s]", s.Violation, s.At, before, seen)
		}
	}
	if !reflect.DeepEqual(gotV, want) {
		t.Fatalf("sightings = %+v\nwant %+v", gotV, want)
	}
}

// TestWatchReconnect: an NB server restart is a sighting (states may have
// been missed), and the watcher keeps auditing afterwards: a dangling
// reference committed after the restart is still caught.
func TestWatchReconnect(t *testing.T) {
	f := newFixture(t, "p1")
	_, rows := f.ApplyGold("vms")
	w := f.watch(nbaudit.Options{})

	f.Srv.Restart()
	resubscribed := f.waitChecks(w, 2) // the initial state of the new monitor
	f.Srv.MustNBCtl("pg-del", rows.PortGroups[0].Name)
	f.waitChecks(w, 3)
	got := w.Stop()
	if len(got) != 2 {
		t.Fatalf("sightings = %+v, want the monitor gap and the dangling reference", got)
	}
	gap := nbaudit.Violation{Row: "NB monitor", Problem: "connection lost: states committed until the monitor was re-established were not audited"}
	if got[0].Violation != gap || got[0].At.After(resubscribed) {
		t.Fatalf("first sighting = %+v, want %+v before %s", got[0], gap, resubscribed)
	}
	dangling := nbaudit.Violation{Row: "QoS " + rows.QoS[0].ExternalIDs[qos.PrimaryIDKey],
		Problem: "match references missing port group @" + rows.PortGroups[0].Name}
	if got[1].Violation != dangling {
		t.Fatalf("second sighting = %+v, want %+v", got[1].Violation, dangling)
	}
}
