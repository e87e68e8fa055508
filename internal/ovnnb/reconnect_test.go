package ovnnb_test

import (
	"context"
	"testing"
	"time"
)

// TestReconnect: the client survives an NB ovsdb-server restart: an Apply
// while the server is down fails by its context, after the restart the
// cache is back (ports, owned rows), Apply works and is idempotent again,
// and port-add callbacks keep coming.
func TestReconnect(t *testing.T) {
	f := newFixture(t, "p1", "p2")
	added := make(chan string, 64)
	f.C.OnLogicalSwitchPortAdd(func(name string) { added <- name })
	key, _ := f.ApplyGold("ns1")

	f.Srv.Stop()
	short, cancel := context.WithTimeout(f.Ctx, 300*time.Millisecond)
	start := time.Now()
	_, err := f.C.Apply(short, key, object(key, 60, []string{"p1", "p2"}, rule{DSCP: 40}))
	cancel()
	// Either the write hits the dead socket or, once the client noticed,
	// the transaction waits for the reconnect until the deadline.
	if err == nil || time.Since(start) > 5*time.Second {
		t.Fatalf("Apply with the server down: err = %v after %s, want an error within the context deadline", err, time.Since(start))
	}
	f.Srv.Restart()

	v2 := object(key, 60, []string{"p1", "p2"}, rule{DSCP: 40, Rate: 5000})
	if res := f.Apply(key, v2); !res.Changed {
		t.Fatalf("Apply after restart = %+v, want Changed", res)
	}
	f.requireApplied(key, v2)
	if res := f.Apply(key, v2); res.Changed {
		t.Fatal("second Apply after restart committed a transaction")
	}
	f.Srv.MustNBCtl("lsp-add", testSwitch, "p3")
	f.waitUntil("add callback for p3 after reconnect", func() bool {
		for {
			select {
			case name := <-added:
				if name == "p3" {
					return true
				}
			default:
				return false
			}
		}
	})
	if keys := f.ownedKeys(); len(keys) != 1 || keys[0] != key {
		t.Fatalf("OwnedKeys after reconnect = %v, want [%v]", keys, key)
	}
}
