package localnetenv

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/nqos/nqos/harness/lifeprobe"
	"github.com/nqos/nqos/internal/ovnnb/nbtest"
)

// The monitor records one transaction per committed NB transaction, with
// inserts, match rewrites and deletes, and fires OnCount hooks at once.
func TestNBMonitor(t *testing.T) {
	srv := nbtest.Start(t)
	srv.MustNBCtl("ls-add", "sw")
	srv.MustNBCtl("pg-add", "before")
	ctx := context.Background()
	m, err := startNBMonitor(ctx, srv.Addr())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(m.Close)
	if init := m.Initial(); len(init) != 1 || init[0].Name != "before" || init[0].Op != lifeprobe.OpInsert {
		t.Fatalf("initial = %+v, want the port group 'before'", init)
	}
	fired := make(chan int, 1)
	m.OnCount(2, func() { fired <- m.countLocked() })
	uuid := strings.TrimSpace(srv.MustNBCtl("--", "create", "Address_Set", "name=as1", "--", "pg-add", "pg1",
		"--", "--id=@q", "create", "QoS", "priority=10000", "direction=to-lport", `match="ip4.src == {$as1}"`, "action:dscp=1",
		"--", "add", "Logical_Switch", "sw", "qos_rules", "@q"))
	qosUUID := strings.Fields(uuid)[1]
	srv.MustNBCtl("set", "QoS", qosUUID, `match="inport == @pg1"`)
	srv.MustNBCtl("destroy", "Address_Set", "as1")
	srv.MustNBCtl("set", "QoS", qosUUID, "action:dscp=2") // an action-only change is a transaction too
	// ovn-nbctl returned after each commit, so one round trip suffices.
	if err := m.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	if n := m.Count(); n != 4 {
		t.Fatalf("after Sync the monitor has %d transactions, want 4", n)
	}
	if err := m.WaitCount(ctx, 4, time.Second); err != nil {
		t.Fatal(err)
	}
	if n := <-fired; n != 2 {
		t.Errorf("OnCount(2) fired at count %d", n)
	}
	txs := m.Transactions(0)
	if len(txs) != 4 {
		t.Fatalf("%d transactions, want 4: %+v", len(txs), txs)
	}
	want := [][]lifeprobe.RowChange{
		{{Table: "Address_Set", Op: lifeprobe.OpInsert, Name: "as1"}, {Table: "Port_Group", Op: lifeprobe.OpInsert, Name: "pg1"}, {Table: "QoS", Op: lifeprobe.OpInsert, Match: "ip4.src == {$as1}"}},
		{{Table: "QoS", Op: lifeprobe.OpModify, Match: "inport == @pg1", OldMatch: "ip4.src == {$as1}"}},
		{{Table: "Address_Set", Op: lifeprobe.OpDelete, Name: "as1"}},
		{{Table: "QoS", Op: lifeprobe.OpModify, Match: "inport == @pg1"}},
	}
	for i, tx := range txs {
		if tx.Seq != i+1 || len(tx.Changes) != len(want[i]) {
			t.Fatalf("transaction %d = %+v, want %+v", i+1, tx, want[i])
		}
		for j, c := range tx.Changes {
			c.UUID = ""
			if c != want[i][j] {
				t.Errorf("transaction %d change %d = %+v, want %+v", i+1, j, c, want[i][j])
			}
		}
	}
	if got := m.Transactions(3); len(got) != 1 || got[0].Seq != 4 {
		t.Errorf("Transactions(3) = %+v, want only the 4th", got)
	}
}

func TestStartNBMonitorBadAddress(t *testing.T) {
	if _, err := startNBMonitor(context.Background(), "nowhere"); err == nil || !strings.Contains(err.Error(), "want unix:") {
		t.Errorf("error = %v", err)
	}
}
