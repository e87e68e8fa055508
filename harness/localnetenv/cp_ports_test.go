package localnetenv

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/nqos/nqos/internal/ovnnb/nbtest"
)

// The monitor reports how many ports a port group holds after each
// change: 2 on insert, 1 after one is removed, 0 when emptied.
func TestNBMonitorPortGroupPorts(t *testing.T) {
	srv := nbtest.Start(t)
	srv.MustNBCtl("ls-add", "sw", "--", "lsp-add", "sw", "p1", "--", "lsp-add", "sw", "p2")
	ctx := context.Background()
	m, err := startNBMonitor(ctx, srv.Addr())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(m.Close)
	srv.MustNBCtl("pg-add", "pg1", "p1", "p2")
	srv.MustNBCtl("pg-set-ports", "pg1", "p1")
	srv.MustNBCtl("clear", "Port_Group", "pg1", "ports")
	if err := m.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	var got []int
	for _, tx := range m.Transactions(0) {
		for _, c := range tx.Changes {
			if c.Table == "Port_Group" {
				got = append(got, c.Ports)
			}
		}
	}
	if len(got) != 3 || got[0] != 2 || got[1] != 1 || got[2] != 0 {
		t.Errorf("port counts %v, want [2 1 0]", got)
	}
}

func TestSetSize(t *testing.T) {
	for raw, want := range map[string]int{
		`["set", []]`: 0, `["uuid", "a"]`: 1, `["set", [["uuid", "a"], ["uuid", "b"]]]`: 2, ``: 0, `"x"`: 1,
	} {
		if got, err := setSize(json.RawMessage(raw)); err != nil || got != want {
			t.Errorf("setSize(%s) = %d, %v, want %d", raw, got, err, want)
		}
	}
	if n, err := setSize(json.RawMessage(`["set", 3]`)); err == nil {
		t.Errorf("setSize of a malformed set = %d, want an error", n)
	}
}
