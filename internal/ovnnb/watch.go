package ovnnb

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ovn-kubernetes/libovsdb/cache"
	"github.com/ovn-kubernetes/libovsdb/model"
	"github.com/ovn-kubernetes/libovsdb/ovsdb"

	"github.com/nqos/nqos/internal/ovnnb/nbdb"
)

// watchedTables are the tables the audit reads.
var watchedTables = []string{nbdb.QoSTable, nbdb.PortGroupTable, nbdb.AddressSetTable, nbdb.LogicalSwitchTable}

// Rows and problems of the watcher's own sightings.
const (
	monitorRow     = "NB monitor"
	problemNoWatch = "cannot watch"
	problemGap     = "connection lost: states committed until the monitor was re-established were not audited"
)

// WatchOptions configure a Watcher.
type WatchOptions struct {
	// Rejected names the objects that must own no rows right now; nil
	// means none. It is called from the watcher's goroutine during every
	// audit and must be safe for concurrent use.
	Rejected func(Key) bool
}

// Sighting is a violation and when the watcher first saw it: the time the
// update notification carrying the violating state arrived.
type Sighting struct {
	At        time.Time
	Violation Violation
}

// Watcher audits every committed Northbound state it is sent, on its
// own monitor connection, and remembers every violation it saw.
type Watcher struct {
	addr    string
	dbModel model.DatabaseModel
	audit   auditor // used by the watcher's goroutine only
	log     *slog.Logger

	cancel context.CancelFunc
	done   chan struct{}
	checks atomic.Int64

	mu    sync.Mutex
	first map[Violation]time.Time

	stopOnce sync.Once
	result   []Sighting
}

// Watch starts a Watcher on its own connection to c's Northbound server.
// When Watch returns the monitor is established and the current state is
// audited, so every transaction committed afterwards is audited too: the
// state after each update notification (one per committed transaction
// while the watcher keeps up) is checked, not a periodic sample. If the
// monitor cannot be set up or the connection drops, that is recorded as
// a sighting on row "NB monitor" (the watcher could not see every state)
// and it reconnects until ctx ends or Stop is called.
func (c *Client) Watch(ctx context.Context, opts WatchOptions) *Watcher {
	wctx, cancel := context.WithCancel(ctx)
	w := &Watcher{addr: c.addr, log: c.log,
		audit:  auditor{rejected: opts.Rejected, refs: map[string][]matchRef{}},
		cancel: cancel, done: make(chan struct{}), first: map[Violation]time.Time{}}
	if tc := c.cli.Cache(); tc != nil {
		w.dbModel = tc.DatabaseModel()
	}
	s, err := w.subscribe(wctx)
	if err != nil {
		w.saw(time.Now(), []Violation{{Row: monitorRow, Problem: fmt.Sprintf("%s: %v", problemNoWatch, err)}})
	}
	go w.run(wctx, s)
	return w
}

// Checks is how many Northbound states have been audited so far.
func (w *Watcher) Checks() int { return int(w.checks.Load()) }

// Stop ends the watcher and returns every violation it saw, each once
// with the time it was first seen, ordered by that time.
func (w *Watcher) Stop() []Sighting {
	w.stopOnce.Do(func() {
		w.cancel()
		<-w.done
		w.mu.Lock()
		defer w.mu.Unlock()
		for v, at := range w.first {
			w.result = append(w.result, Sighting{At: at, Violation: v})
		}
		sort.Slice(w.result, func(i, j int) bool {
			a, b := w.result[i], w.result[j]
			if !a.At.Equal(b.At) {
				return a.At.Before(b.At)
			}
			if a.Violation.Row != b.Violation.Row {
				return a.Violation.Row < b.Violation.Row
			}
			return a.Violation.Problem < b.Violation.Problem
		})
	})
	return append([]Sighting(nil), w.result...)
}

// subscription is one monitor connection and the private cache its
// notifications are applied to.
type subscription struct {
	conn   *monConn
	tc     *cache.TableCache
	stopTC chan struct{}
}

func (s *subscription) close() {
	_ = s.conn.Close()
	close(s.stopTC)
}

// subscribe opens a monitor, loads its initial state into a fresh cache
// and audits it.
func (w *Watcher) subscribe(ctx context.Context) (*subscription, error) {
	if !w.dbModel.Valid() {
		return nil, fmt.Errorf("NB %s: client has no database model", w.addr)
	}
	tc, err := cache.NewTableCache(w.dbModel, nil, nil)
	if err != nil {
		return nil, fmt.Errorf("NB %s: watcher cache: %w", w.addr, err)
	}
	conn, initial, err := dialMonitor(ctx, w.addr, watchedTables)
	if err != nil {
		return nil, err
	}
	s := &subscription{conn: conn, tc: tc, stopTC: make(chan struct{})}
	// Drain the cache's event queue (no handlers): it would otherwise
	// keep up to 64k row copies alive.
	go tc.Run(s.stopTC)
	if err := w.apply(s, time.Now(), initial); err != nil {
		s.close()
		return nil, err
	}
	return s, nil
}

// run follows the subscription, reconnecting after a dropped connection,
// until ctx ends.
func (w *Watcher) run(ctx context.Context, s *subscription) {
	defer close(w.done)
	bo := newStoppableBackOff()
	for {
		if s != nil {
			err := w.follow(ctx, s)
			s.close()
			if ctx.Err() != nil {
				return
			}
			w.log.Warn("NB watcher lost its monitor", "addr", w.addr, "err", err)
			w.saw(time.Now(), []Violation{{Row: monitorRow, Problem: problemGap}})
			s = nil
			bo.Reset()
		}
		t := time.NewTimer(bo.NextBackOff())
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
		var err error
		if s, err = w.subscribe(ctx); err != nil {
			w.log.Debug("NB watcher reconnect", "addr", w.addr, "err", err)
		}
	}
}

// follow reads notifications on one goroutine and audits them in order
// on this one, until the connection fails or ctx ends.
func (w *Watcher) follow(ctx context.Context, s *subscription) error {
	q := newUpdateQueue()
	stopRead := context.AfterFunc(ctx, func() { _ = s.conn.Close() })
	defer stopRead()
	readerDone := make(chan struct{})
	defer func() {
		_ = s.conn.Close() // ends the reader
		<-readerDone
	}()
	go func() {
		defer close(readerDone)
		for {
			raw, err := s.conn.next()
			if err != nil {
				q.fail(err)
				return
			}
			q.push(received{at: time.Now(), updates: raw})
		}
	}()
	for {
		r, err := q.pop(ctx)
		if err != nil {
			return err
		}
		var tu ovsdb.TableUpdates
		if err := json.Unmarshal(r.updates, &tu); err != nil {
			return fmt.Errorf("decode NB update: %w", err)
		}
		if err := w.apply(s, r.at, tu); err != nil {
			return err
		}
	}
}

// apply moves the private cache to the notified state and audits it.
func (w *Watcher) apply(s *subscription, at time.Time, tu ovsdb.TableUpdates) error {
	if err := s.tc.Update(nil, tu); err != nil {
		return fmt.Errorf("apply NB update to the watcher cache: %w", err)
	}
	w.saw(at, w.audit.check(cacheView(s.tc)))
	w.checks.Add(1)
	return nil
}

// saw records the violations of one state, keeping first sightings.
func (w *Watcher) saw(at time.Time, vs []Violation) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, v := range vs {
		if _, ok := w.first[v]; !ok {
			w.first[v] = at
		}
	}
}

// cacheView lists the audited tables of a private cache, sorted by UUID.
// Only the watcher's goroutine writes to it, so the view is consistent.
func cacheView(tc *cache.TableCache) nbView {
	var v nbView
	v.qos = rowsOf[nbdb.QoS](tc, nbdb.QoSTable)
	v.pgs = rowsOf[nbdb.PortGroup](tc, nbdb.PortGroupTable)
	v.ases = rowsOf[nbdb.AddressSet](tc, nbdb.AddressSetTable)
	v.switches = rowsOf[nbdb.LogicalSwitch](tc, nbdb.LogicalSwitchTable)
	return v
}

func rowsOf[T any](tc *cache.TableCache, table string) []T {
	rc := tc.Table(table)
	if rc == nil {
		return nil
	}
	rows := rc.RowsShallow()
	out := make([]T, 0, len(rows))
	for _, u := range slices.Sorted(maps.Keys(rows)) {
		if m, ok := rows[u].(*T); ok {
			out = append(out, *m)
		}
	}
	return out
}
