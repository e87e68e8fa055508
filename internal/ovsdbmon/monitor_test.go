package ovsdbmon_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nqos/nqos/internal/ovnnb/nbtest"
	"github.com/nqos/nqos/internal/ovsdbmon"
)

const deadline = 20 * time.Second

func dial(t *testing.T, srv *nbtest.Server, opts ovsdbmon.Options) *ovsdbmon.Monitor {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), deadline)
	defer cancel()
	m, err := ovsdbmon.Dial(ctx, srv.Addr(), opts)
	if err != nil {
		t.Fatalf("Dial: %v", err)
	}
	t.Cleanup(func() { _ = m.Close() })
	return m
}

func name(t *testing.T, r ovsdbmon.Row) string {
	t.Helper()
	var n string
	if err := ovsdbmon.Decode(r, "name", ovsdbmon.String, &n); err != nil {
		t.Fatal(err)
	}
	return n
}

// TestOneNotificationPerTransaction: the initial contents hold the
// existing row; each of three ovn-nbctl transactions is one notification,
// in order, numbered from 1, with its rows and an arrival time after the
// commit started; a two-command transaction is one notification.
func TestOneNotificationPerTransaction(t *testing.T) {
	srv := nbtest.Start(t)
	srv.MustNBCtl("ls-add", "sw0")
	m := dial(t, srv, ovsdbmon.Options{Tables: ovsdbmon.Columns{"Logical_Switch": {"name"}, "Port_Group": nil}})
	if got := m.Initial()["Logical_Switch"]; len(got) != 1 {
		t.Fatalf("initial Logical_Switch rows = %v, want sw0 only", got)
	}
	before := time.Now()
	srv.MustNBCtl("ls-add", "sw1")
	srv.MustNBCtl("pg-add", "pg1", "--", "ls-add", "sw2")
	srv.MustNBCtl("ls-del", "sw1")
	ctx, cancel := context.WithTimeout(context.Background(), deadline)
	defer cancel()
	var got []string
	for i := 1; i <= 3; i++ {
		n, err := m.Next(ctx)
		if err != nil {
			t.Fatalf("notification %d: %v", i, err)
		}
		if n.Seq != i || n.At.Before(before) {
			t.Fatalf("notification %d: Seq %d at %s, want Seq %d after %s", i, n.Seq, n.At, i, before)
		}
		var parts []string
		for _, table := range []string{"Logical_Switch", "Port_Group"} {
			for _, ru := range n.Update[table] {
				switch {
				case ru.New == nil:
					parts = append(parts, "-"+name(t, ru.Old))
				default:
					parts = append(parts, "+"+name(t, ru.New))
				}
			}
		}
		got = append(got, strings.Join(parts, " "))
	}
	want := []string{"+sw1", "+sw2 +pg1", "-sw1"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("notifications = %q, want %q", got, want)
	}
	if err := m.Sync(ctx); err != nil {
		t.Fatalf("Sync: %v", err)
	}
	if m.Count() != 3 {
		t.Fatalf("Count = %d after Sync, want 3", m.Count())
	}
}

// TestHandleAndSync: with Handle set, the initial contents come first as
// Seq 0, and every transaction committed before Sync was handed over on
// the reader goroutine when Sync returns.
func TestHandleAndSync(t *testing.T) {
	srv := nbtest.Start(t)
	var mu sync.Mutex
	var seqs []int
	m := dial(t, srv, ovsdbmon.Options{Tables: ovsdbmon.Columns{"Logical_Switch": nil},
		Handle: func(n ovsdbmon.Notification) {
			mu.Lock()
			seqs = append(seqs, n.Seq)
			mu.Unlock()
		}})
	for _, sw := range []string{"a", "b", "c", "d"} {
		srv.MustNBCtl("ls-add", sw)
	}
	ctx, cancel := context.WithTimeout(context.Background(), deadline)
	defer cancel()
	if err := m.Sync(ctx); err != nil {
		t.Fatalf("Sync: %v", err)
	}
	mu.Lock()
	defer mu.Unlock()
	if !slices.Equal(seqs, []int{0, 1, 2, 3, 4}) {
		t.Fatalf("handled notifications %v at Sync, want [0 1 2 3 4]", seqs)
	}
}

// TestErrors: a bad address, an unknown table and a server that goes
// away are errors that name the cause; Close ends Next with ErrClosed.
func TestErrors(t *testing.T) {
	srv := nbtest.Start(t)
	ctx, cancel := context.WithTimeout(context.Background(), deadline)
	defer cancel()
	for _, c := range []struct {
		addr string
		opts ovsdbmon.Options
		want string
	}{
		{"bogus", ovsdbmon.Options{Tables: ovsdbmon.Columns{"QoS": nil}}, "want unix:/path"},
		{"ssl:127.0.0.1:1", ovsdbmon.Options{Tables: ovsdbmon.Columns{"QoS": nil}}, "ssl needs a TLS configuration"},
		{srv.Addr(), ovsdbmon.Options{}, "no tables"},
		{srv.Addr(), ovsdbmon.Options{Tables: ovsdbmon.Columns{"NoSuchTable": nil}}, "monitor refused"},
		{"unix:" + srv.Dir() + "/absent.sock", ovsdbmon.Options{Tables: ovsdbmon.Columns{"QoS": nil}}, "dial ovsdb"},
	} {
		if m, err := ovsdbmon.Dial(ctx, c.addr, c.opts); err == nil || !strings.Contains(err.Error(), c.want) {
			if m != nil {
				_ = m.Close()
			}
			t.Errorf("Dial(%q, %+v) error = %v, want one containing %q", c.addr, c.opts, err, c.want)
		}
	}

	m := dial(t, srv, ovsdbmon.Options{Tables: ovsdbmon.Columns{"Logical_Switch": nil}})
	srv.MustNBCtl("ls-add", "x")
	// ovn-nbctl returns once the transaction committed, not once the
	// server sent the monitor's notification of it: stopping the server
	// now could kill it before the notification leaves. Sync's echo is
	// answered after every earlier notification was sent and received.
	if err := m.Sync(ctx); err != nil {
		t.Fatalf("Sync: %v", err)
	}
	srv.Stop()
	if n, err := m.Next(ctx); err != nil || n.Seq != 1 {
		t.Fatalf("Next after the server stopped = %+v, %v: want the queued notification first", n, err)
	}
	if _, err := m.Next(ctx); err == nil || errors.Is(err, ovsdbmon.ErrClosed) || ctx.Err() != nil {
		t.Fatalf("Next on a dead server = %v, want the read error", err)
	}
	if err := m.Sync(ctx); err == nil {
		t.Fatal("Sync on a dead server succeeded")
	}

	srv.Restart()
	m2 := dial(t, srv, ovsdbmon.Options{Tables: ovsdbmon.Columns{"Logical_Switch": nil}})
	if err := m2.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if _, err := m2.Next(ctx); !errors.Is(err, ovsdbmon.ErrClosed) {
		t.Fatalf("Next after Close = %v, want ErrClosed", err)
	}
}
