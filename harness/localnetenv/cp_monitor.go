package localnetenv

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/nqos/nqos/harness/lifeprobe"
	"github.com/nqos/nqos/internal/ovsdbmon"
	"github.com/nqos/nqos/internal/poll"
)

// nbMonitor records every committed transaction on the Northbound's QoS,
// Port_Group and Address_Set tables with its arrival time, on the raw
// OVSDB monitor of package internal/ovsdbmon (independent of the
// controller's libovsdb client).
type nbMonitor struct {
	mon *ovsdbmon.Monitor

	mu      sync.Mutex
	txs     []lifeprobe.Transaction
	initial []lifeprobe.RowChange
	err     error
	hooks   []countHook
}

// countHook runs fn once the monitor has recorded n transactions.
type countHook struct {
	n  int
	fn func()
}

// startNBMonitor connects to addr ("unix:/path" or "tcp:host:port") and
// returns once the initial contents arrived, so every transaction
// committed afterwards is recorded.
func startNBMonitor(ctx context.Context, addr string) (*nbMonitor, error) {
	m := &nbMonitor{}
	// every column: any committed change to the tables is one transaction
	tables := ovsdbmon.Columns{"QoS": nil, "Port_Group": nil, "Address_Set": nil}
	mon, err := ovsdbmon.Dial(ctx, addr, ovsdbmon.Options{Database: "OVN_Northbound", Tables: tables, Handle: m.record})
	if err != nil {
		return nil, fmt.Errorf("NB monitor %s: %w", addr, err)
	}
	m.mon = mon
	return m, nil
}

// record keeps one notification (Seq 0: the initial contents) and runs
// the hooks it satisfies.
func (m *nbMonitor) record(n ovsdbmon.Notification) {
	changes, err := decodeChanges(n.Update)
	m.mu.Lock()
	defer m.mu.Unlock()
	if err != nil && m.err == nil {
		m.err = err
	}
	if n.Seq == 0 {
		m.initial = changes
		return
	}
	m.txs = append(m.txs, lifeprobe.Transaction{Seq: len(m.txs) + 1, At: n.At, Changes: changes})
	m.hooks = slices.DeleteFunc(m.hooks, func(h countHook) bool {
		if h.n <= len(m.txs) {
			h.fn()
			return true
		}
		return false
	})
}

// OnCount runs fn on the monitor's goroutine as soon as it has recorded
// n transactions (at once if it already has): the lowest-latency way to
// act right after a given transaction. fn must not block or call back
// into the monitor.
func (m *nbMonitor) OnCount(n int, fn func()) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if len(m.txs) >= n {
		fn()
		return
	}
	m.hooks = append(m.hooks, countHook{n: n, fn: fn})
}

// decodeChanges turns an update into sorted row changes.
func decodeChanges(u ovsdbmon.Update) ([]lifeprobe.RowChange, error) {
	var out []lifeprobe.RowChange
	for table, rows := range u {
		for uuid, ru := range rows {
			c, err := rowChange(table, uuid, ru)
			if err != nil {
				return nil, err
			}
			out = append(out, c)
		}
	}
	slices.SortFunc(out, func(a, b lifeprobe.RowChange) int { // by table, then UUID
		return cmp.Or(strings.Compare(a.Table, b.Table), strings.Compare(a.UUID, b.UUID))
	})
	return out, nil
}

func rowChange(table, uuid string, ru ovsdbmon.RowUpdate) (lifeprobe.RowChange, error) {
	c := lifeprobe.RowChange{Table: table, UUID: uuid}
	img := ru.New
	var err error
	switch {
	case ru.New == nil:
		c.Op, img = lifeprobe.OpDelete, ru.Old
	case ru.Old == nil:
		c.Op = lifeprobe.OpInsert
	default:
		c.Op = lifeprobe.OpModify
		c.OldMatch, err = optString(ru.Old, "match")
	}
	if err == nil {
		c.Name, err = optString(img, "name")
	}
	if err == nil {
		c.Match, err = optString(img, "match")
	}
	if err == nil && table == "Port_Group" && c.Op != lifeprobe.OpDelete {
		c.Ports, err = setSize(img["ports"])
	}
	if err != nil {
		return c, fmt.Errorf("%s %s: %w", table, uuid, err)
	}
	return c, nil
}

// optString decodes a string column that may be absent from the image.
func optString(row ovsdbmon.Row, col string) (string, error) {
	raw, ok := row[col]
	if !ok {
		return "", nil
	}
	s, err := ovsdbmon.String(raw)
	if err != nil {
		return "", fmt.Errorf("column %s: %w", col, err)
	}
	return s, nil
}

// setSize counts the members of an OVSDB set column (absent: empty).
func setSize(raw json.RawMessage) (int, error) {
	if len(raw) == 0 {
		return 0, nil
	}
	set, err := ovsdbmon.Set(raw)
	if err != nil {
		return 0, fmt.Errorf("column ports: %w", err)
	}
	return len(set), nil
}

// Sync makes an echo round trip on the monitor's connection: every
// transaction the server committed before it handled the echo has been
// recorded when Sync returns.
func (m *nbMonitor) Sync(ctx context.Context) error {
	if err := m.mon.Sync(ctx); err != nil {
		return fmt.Errorf("NB monitor sync: %w", err)
	}
	return nil
}

// Count is how many transactions the monitor has recorded.
func (m *nbMonitor) Count() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.txs)
}

// Initial returns the rows present when the monitor started (as inserts).
func (m *nbMonitor) Initial() []lifeprobe.RowChange {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]lifeprobe.RowChange(nil), m.initial...)
}

// Transactions returns the recorded transactions with Seq > after.
func (m *nbMonitor) Transactions(after int) []lifeprobe.Transaction {
	m.mu.Lock()
	defer m.mu.Unlock()
	if after >= len(m.txs) {
		return nil
	}
	return append([]lifeprobe.Transaction(nil), m.txs[max(after, 0):]...)
}

// Err is the error that ended or disturbed the monitor, if any: a
// notification it could not decode or the connection's end.
func (m *nbMonitor) Err() error {
	m.mu.Lock()
	err := m.err
	m.mu.Unlock()
	if err != nil {
		return err
	}
	return m.mon.Err()
}

// WaitCount waits until the monitor recorded at least n transactions.
func (m *nbMonitor) WaitCount(ctx context.Context, n int, timeout time.Duration) error {
	return poll.Until(ctx, timeout, time.Millisecond, fmt.Sprintf("NB transaction %d", n), func(context.Context) (bool, error) {
		select {
		case <-m.mon.Done():
			return false, fmt.Errorf("NB monitor closed after %d transactions: %w", m.Count(), m.Err())
		default:
		}
		return m.Count() >= n, nil
	})
}

// Close ends the monitor connection.
func (m *nbMonitor) Close() { _ = m.mon.Close() }

// countLocked is Count for hooks, which run with the lock held.
func (m *nbMonitor) countLocked() int { return len(m.txs) }
