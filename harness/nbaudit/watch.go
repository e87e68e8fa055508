package nbaudit

import (
	"cmp"
	"context"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cenkalti/backoff/v4"

	"github.com/nqos/nqos/internal/ovnnb"
	"github.com/nqos/nqos/internal/ovsdbmon"
)

// Rows and problems of the watcher's own sightings.
const (
	monitorRow     = "NB monitor"
	problemNoWatch = "cannot watch"
	problemGap     = "connection lost: states committed until the monitor was re-established were not audited"
)

// Reconnect backoff of a Watcher whose monitor connection dropped.
const (
	reconnectFirst = 50 * time.Millisecond
	reconnectCap   = 2 * time.Second
)

// Options configure a Watcher.
type Options struct {
	// Rejected names the objects that must own no rows right now; nil
	// means none. It is called from the watcher's goroutine during every
	// audit and must be safe for concurrent use.
	Rejected func(ovnnb.Key) bool
	// Log receives reconnect messages; nil discards them.
	Log *slog.Logger
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
	addr  string
	opts  Options
	log   *slog.Logger
	audit auditor // used by the watcher's goroutine only

	cancel context.CancelFunc
	done   chan struct{}
	checks atomic.Int64

	mu    sync.Mutex
	first map[Violation]time.Time

	stopOnce sync.Once
	result   []Sighting
}

// Watch starts a Watcher on its own connection to the Northbound at addr.
// When Watch returns the monitor is established and the current state is
// audited, so every transaction committed afterwards is audited too: the
// state after each update notification (one per committed transaction)
// is checked, not a periodic sample. If the monitor cannot be set up or
// the connection drops, that is recorded as a sighting on row "NB
// monitor" (the watcher could not see every state) and it reconnects
// until ctx ends or Stop is called.
func Watch(ctx context.Context, addr string, opts Options) *Watcher {
	wctx, cancel := context.WithCancel(ctx)
	log := opts.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	w := &Watcher{addr: addr, opts: opts, log: log,
		audit:  auditor{rejected: opts.Rejected, refs: map[string][]ovnnb.MatchRef{}},
		cancel: cancel, done: make(chan struct{}), first: map[Violation]time.Time{}}
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
		slices.SortFunc(w.result, func(a, b Sighting) int {
			return cmp.Or(a.At.Compare(b.At), compareViolations(a.Violation, b.Violation))
		})
	})
	return append([]Sighting(nil), w.result...)
}

// subscription is one monitor connection and the replica its
// notifications are applied to.
type subscription struct {
	mon *ovsdbmon.Monitor
	rep *replica
}

// subscribe opens a monitor, loads its initial state into a fresh
// replica and audits it.
func (w *Watcher) subscribe(ctx context.Context) (*subscription, error) {
	mon, err := ovsdbmon.Dial(ctx, w.addr, ovsdbmon.Options{Tables: monitoredColumns()})
	if err != nil {
		return nil, err
	}
	s := &subscription{mon: mon, rep: newReplica()}
	if err := w.apply(s, time.Now(), mon.Initial()); err != nil {
		_ = mon.Close()
		return nil, err
	}
	return s, nil
}

// run follows the subscription, reconnecting after a dropped connection,
// until ctx ends.
func (w *Watcher) run(ctx context.Context, s *subscription) {
	defer close(w.done)
	bo := backoff.NewExponentialBackOff(backoff.WithInitialInterval(reconnectFirst),
		backoff.WithMaxInterval(reconnectCap), backoff.WithMaxElapsedTime(0))
	for {
		if s != nil {
			err := w.follow(ctx, s)
			_ = s.mon.Close()
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

// follow audits the notifications in order until the connection fails
// or ctx ends.
func (w *Watcher) follow(ctx context.Context, s *subscription) error {
	for {
		n, err := s.mon.Next(ctx)
		if err != nil {
			return err
		}
		if err := w.apply(s, n.At, n.Update); err != nil {
			return err
		}
	}
}

// apply moves the replica to the notified state and audits it.
func (w *Watcher) apply(s *subscription, at time.Time, u ovsdbmon.Update) error {
	if err := s.rep.apply(u); err != nil {
		return fmt.Errorf("NB %s: watcher replica: %w", w.addr, err)
	}
	w.saw(at, w.audit.check(s.rep.tables()))
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
