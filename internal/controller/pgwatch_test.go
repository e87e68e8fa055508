package controller

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/nqos/nqos/internal/ovsdbmon"
)

// pgWatch is a raw OVSDB JSON-RPC monitor of Logical_Switch_Port names,
// Port_Group ports and QoS rows, recording when each LSP first appeared
// and when it first became a port-group member, and counting committed
// transactions.
type pgWatch struct {
	raw      *ovsdbmon.Monitor
	mu       sync.Mutex
	cond     *sync.Cond
	lspName  map[string]string    // lsp uuid -> name
	lspSeen  map[string]time.Time // name -> first seen
	member   map[string]time.Time // name -> first seen in a port group
	pgPorts  map[string][]string  // pg uuid -> lsp uuids
	qosRows  map[string]bool
	updates  int
	finished bool
	err      error // a malformed row, or why the connection ended
}

func startPGWatch(t testing.TB, addr string) *pgWatch {
	t.Helper()
	w := &pgWatch{lspName: map[string]string{}, lspSeen: map[string]time.Time{}, member: map[string]time.Time{},
		pgPorts: map[string][]string{}, qosRows: map[string]bool{}}
	w.cond = sync.NewCond(&w.mu)
	w.raw = startRawMonitor(t, addr, ovsdbmon.Columns{"Logical_Switch_Port": {"name"}, "Port_Group": {"ports"}, "QoS": {"priority"}},
		w.apply, func(err error) {
			w.mu.Lock()
			w.finished, w.err = true, err
			w.cond.Broadcast()
			w.mu.Unlock()
		})
	return w
}

func (w *pgWatch) apply(tu ovsdbmon.Update, now time.Time) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.updates++
	for uuid, ru := range tu["Logical_Switch_Port"] {
		if ru.New == nil {
			delete(w.lspName, uuid)
			continue
		}
		var name string
		if err := ovsdbmon.Decode(ru.New, "name", ovsdbmon.String, &name); err != nil && w.err == nil {
			w.err = err
		}
		w.lspName[uuid] = name
		if _, ok := w.lspSeen[name]; !ok {
			w.lspSeen[name] = now
		}
	}
	for uuid, ru := range tu["QoS"] {
		if ru.New == nil {
			delete(w.qosRows, uuid)
		} else {
			w.qosRows[uuid] = true
		}
	}
	for uuid, ru := range tu["Port_Group"] {
		if ru.New == nil {
			delete(w.pgPorts, uuid)
			continue
		}
		var ports []string
		if err := ovsdbmon.Decode(ru.New, "ports", ovsdbmon.UUIDSet, &ports); err != nil && w.err == nil {
			w.err = err
		}
		w.pgPorts[uuid] = ports
		for _, p := range w.pgPorts[uuid] {
			if name := w.lspName[p]; name != "" {
				if _, ok := w.member[name]; !ok {
					w.member[name] = now
				}
			}
		}
	}
	w.cond.Broadcast()
}

// waitFor blocks until cond holds (checked after each transaction) or
// timeout passes.
func (w *pgWatch) waitFor(timeout time.Duration, cond func() bool) error {
	timedOut := false
	timer := time.AfterFunc(timeout, func() {
		w.mu.Lock()
		timedOut = true
		w.cond.Broadcast()
		w.mu.Unlock()
	})
	defer timer.Stop()
	w.mu.Lock()
	defer w.mu.Unlock()
	for !cond() {
		if timedOut {
			return fmt.Errorf("timed out after %v", timeout)
		}
		if w.err != nil {
			return fmt.Errorf("NB monitor: %w", w.err)
		}
		if w.finished {
			return fmt.Errorf("NB monitor connection closed")
		}
		w.cond.Wait()
	}
	return nil
}

// membership returns LSP-insert to port-group-member latency of name.
func (w *pgWatch) membership(name string) (time.Duration, bool) {
	a, ok1 := w.lspSeen[name]
	b, ok2 := w.member[name]
	return b.Sub(a), ok1 && ok2
}

// totals are the current member and QoS row counts.
func (w *pgWatch) totals() (members, rows int) {
	for _, ports := range w.pgPorts {
		members += len(ports)
	}
	return members, len(w.qosRows)
}
