package cplife

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"slices"
	"strings"
	"sync"
	"time"
)

// Row change operations of a Transaction.
const (
	OpInsert = "insert"
	OpModify = "modify"
	OpDelete = "delete"
)

// RowChange is one row a committed Northbound transaction touched.
type RowChange struct {
	Table string `json:"table"`
	UUID  string `json:"uuid"`
	Op    string `json:"op"`
	// Name is the name column (Port_Group, Address_Set).
	Name string `json:"name,omitempty"`
	// Match is the QoS match after the change (before it, on delete);
	// OldMatch is set when a modify changed it.
	Match    string `json:"match,omitempty"`
	OldMatch string `json:"oldMatch,omitempty"`
	// Ports is how many ports a Port_Group row holds after the change.
	Ports int `json:"ports,omitempty"`
}

// Transaction is one update notification of the monitor: ovsdb-server
// sends exactly one per committed transaction touching the monitored
// tables. Seq counts from 1; the initial contents are not a transaction.
type Transaction struct {
	Seq     int         `json:"seq"`
	At      time.Time   `json:"at"`
	Changes []RowChange `json:"changes"`
}

// NBMonitor is an independent raw OVSDB JSON-RPC monitor on the
// Northbound's QoS, Port_Group and Address_Set tables (it shares no code
// with the controller's libovsdb client) that records every committed
// transaction with its arrival time.
type NBMonitor struct {
	conn net.Conn
	done chan struct{}
	mu   sync.Mutex
	txs  []Transaction
	// Initial holds the rows present when the monitor started.
	initial []RowChange
	err     error
	hooks   []countHook
	// wmu serialises writes (echo replies and Sync requests).
	wmu     sync.Mutex
	enc     *json.Encoder
	syncs   map[string]chan struct{}
	syncSeq int
}

// countHook runs fn once the monitor has recorded n transactions.
type countHook struct {
	n  int
	fn func()
}

// monitoredTables are the tables the monitor watches (every column, so
// any committed change to them is one recorded transaction).
var monitoredTables = []string{"QoS", "Port_Group", "Address_Set"}

// rpcMessage is a JSON-RPC message of the OVSDB protocol.
type rpcMessage struct {
	Method string            `json:"method,omitempty"`
	Params []json.RawMessage `json:"params,omitempty"`
	Result json.RawMessage   `json:"result,omitempty"`
	Error  json.RawMessage   `json:"error,omitempty"`
	ID     any               `json:"id"`
}

// rowImage is one row's change in a table update.
type rowImage struct {
	Old map[string]json.RawMessage `json:"old"`
	New map[string]json.RawMessage `json:"new"`
}

type tableUpdates map[string]map[string]rowImage

// StartNBMonitor connects to addr ("unix:/path" or "tcp:host:port") and
// returns once the initial contents arrived, so every transaction
// committed afterwards is recorded.
func StartNBMonitor(ctx context.Context, addr string) (*NBMonitor, error) {
	network, path, ok := strings.Cut(addr, ":")
	if !ok || (network != "unix" && network != "tcp") {
		return nil, fmt.Errorf("NB monitor: address %q: want unix:<path> or tcp:<host>:<port>", addr)
	}
	var d net.Dialer
	conn, err := d.DialContext(ctx, network, path)
	if err != nil {
		return nil, fmt.Errorf("NB monitor %s: %w", addr, err)
	}
	reqs := map[string]any{}
	for _, table := range monitoredTables {
		reqs[table] = map[string]any{}
	}
	req := map[string]any{"method": "monitor", "id": "cplife", "params": []any{"OVN_Northbound", nil, reqs}}
	m := &NBMonitor{conn: conn, done: make(chan struct{}), enc: json.NewEncoder(conn), syncs: map[string]chan struct{}{}}
	if err := m.enc.Encode(req); err != nil {
		conn.Close()
		return nil, fmt.Errorf("NB monitor %s: request: %w", addr, err)
	}
	ready := make(chan error, 1)
	go m.read(ready)
	select {
	case err := <-ready:
		if err != nil {
			m.Close()
			return nil, fmt.Errorf("NB monitor %s: %w", addr, err)
		}
		return m, nil
	case <-ctx.Done():
		m.Close()
		return nil, fmt.Errorf("NB monitor %s: %w", addr, ctx.Err())
	}
}

func (m *NBMonitor) read(ready chan<- error) {
	defer close(m.done)
	dec := json.NewDecoder(m.conn)
	started := false
	for {
		var msg rpcMessage
		if err := dec.Decode(&msg); err != nil {
			m.mu.Lock()
			m.err = err
			m.mu.Unlock()
			if !started {
				ready <- err
			}
			return
		}
		at := time.Now()
		switch {
		case msg.Method == "echo":
			m.write(map[string]any{"id": msg.ID, "result": msg.Params, "error": nil})
		case msg.Method == "" && started:
			m.synced(msg.ID)
		case msg.Method == "update" && len(msg.Params) == 2:
			m.record(msg.Params[1], at)
		case msg.Method == "" && !started:
			started = true
			if len(msg.Error) > 0 && string(msg.Error) != "null" {
				ready <- fmt.Errorf("monitor refused: %s", msg.Error)
				return
			}
			changes, err := decodeChanges(msg.Result)
			m.mu.Lock()
			m.initial = changes
			m.mu.Unlock()
			ready <- err
		}
	}
}

func (m *NBMonitor) record(raw json.RawMessage, at time.Time) {
	changes, err := decodeChanges(raw)
	m.mu.Lock()
	defer m.mu.Unlock()
	if err != nil && m.err == nil {
		m.err = err
	}
	m.txs = append(m.txs, Transaction{Seq: len(m.txs) + 1, At: at, Changes: changes})
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
func (m *NBMonitor) OnCount(n int, fn func()) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if len(m.txs) >= n {
		fn()
		return
	}
	m.hooks = append(m.hooks, countHook{n: n, fn: fn})
}

// decodeChanges turns a table-updates object into sorted row changes.
func decodeChanges(raw json.RawMessage) ([]RowChange, error) {
	var tu tableUpdates
	if err := json.Unmarshal(raw, &tu); err != nil {
		return nil, fmt.Errorf("decode table updates: %w", err)
	}
	var out []RowChange
	for table, rows := range tu {
		for uuid, img := range rows {
			out = append(out, rowChange(table, uuid, img))
		}
	}
	sortChanges(out)
	return out, nil
}

func rowChange(table, uuid string, img rowImage) RowChange {
	c := RowChange{Table: table, UUID: uuid}
	switch {
	case img.New == nil:
		c.Op = OpDelete
		c.Name, c.Match = stringCol(img.Old, "name"), stringCol(img.Old, "match")
		return c
	case img.Old == nil:
		c.Op = OpInsert
	default:
		c.Op = OpModify
		c.OldMatch = stringCol(img.Old, "match")
	}
	c.Name, c.Match = stringCol(img.New, "name"), stringCol(img.New, "match")
	if table == "Port_Group" {
		c.Ports = setSize(img.New["ports"])
	}
	return c
}

// setSize counts the members of an OVSDB set column: ["set", [...]] or
// a single atom (one member); absent or malformed is 0.
func setSize(raw json.RawMessage) int {
	var set []json.RawMessage
	if len(raw) == 0 || json.Unmarshal(raw, &set) != nil || len(set) != 2 {
		return 0
	}
	var tag string
	if json.Unmarshal(set[0], &tag) != nil {
		return 0
	}
	if tag != "set" {
		return 1 // ["uuid", "..."]
	}
	var members []json.RawMessage
	if json.Unmarshal(set[1], &members) != nil {
		return 0
	}
	return len(members)
}

// stringCol decodes a string column of a row image ("" when absent).
func stringCol(row map[string]json.RawMessage, col string) string {
	var s string
	if raw, ok := row[col]; ok {
		_ = json.Unmarshal(raw, &s)
	}
	return s
}

func (m *NBMonitor) write(v any) error {
	m.wmu.Lock()
	defer m.wmu.Unlock()
	return m.enc.Encode(v)
}

// synced releases the Sync waiting for the reply id.
func (m *NBMonitor) synced(id any) {
	key, _ := id.(string)
	m.mu.Lock()
	defer m.mu.Unlock()
	if ch, ok := m.syncs[key]; ok {
		close(ch)
		delete(m.syncs, key)
	}
}

// Sync makes a round trip to the server (an echo on the monitor's
// connection): every transaction the server committed before it handled
// the echo has been recorded when Sync returns, because ovsdb-server
// queues a monitor's updates on its connection ahead of later replies.
func (m *NBMonitor) Sync(ctx context.Context) error {
	m.mu.Lock()
	m.syncSeq++
	id := fmt.Sprintf("cplife-sync-%d", m.syncSeq)
	ch := make(chan struct{})
	m.syncs[id] = ch
	m.mu.Unlock()
	if err := m.write(map[string]any{"method": "echo", "params": []any{id}, "id": id}); err != nil {
		return fmt.Errorf("NB monitor sync: %w", err)
	}
	select {
	case <-ch:
		return nil
	case <-m.done:
		return fmt.Errorf("NB monitor sync: connection closed: %w", m.Err())
	case <-ctx.Done():
		return fmt.Errorf("NB monitor sync: %w", ctx.Err())
	}
}

// Count is how many transactions the monitor has recorded.
func (m *NBMonitor) Count() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.txs)
}

// Initial returns the rows present when the monitor started (as inserts).
func (m *NBMonitor) Initial() []RowChange {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]RowChange(nil), m.initial...)
}

// Transactions returns the recorded transactions with Seq > after.
func (m *NBMonitor) Transactions(after int) []Transaction {
	m.mu.Lock()
	defer m.mu.Unlock()
	if after >= len(m.txs) {
		return nil
	}
	return append([]Transaction(nil), m.txs[max(after, 0):]...)
}

// Err is the error that ended or disturbed the monitor, if any.
func (m *NBMonitor) Err() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.err
}

// WaitCount waits until the monitor recorded at least n transactions.
func (m *NBMonitor) WaitCount(ctx context.Context, n int, timeout time.Duration) error {
	return pollEvery(ctx, timeout, time.Millisecond, fmt.Sprintf("NB transaction %d", n), func() (bool, error) {
		select {
		case <-m.done:
			return false, fmt.Errorf("NB monitor closed after %d transactions: %w", m.Count(), m.Err())
		default:
		}
		return m.Count() >= n, nil
	})
}

// Close ends the monitor connection.
func (m *NBMonitor) Close() {
	m.conn.Close()
	<-m.done
}

// countLocked is Count for hooks, which run with the lock held.
func (m *NBMonitor) countLocked() int { return len(m.txs) }

// ChangeCounts counts row changes per "<table> <op>" (e.g. "QoS insert").
type ChangeCounts map[string]int

// CountChanges tallies the row changes of txs.
func CountChanges(txs []Transaction) ChangeCounts {
	out := ChangeCounts{}
	for _, tx := range txs {
		for _, c := range tx.Changes {
			out[c.Table+" "+c.Op]++
		}
	}
	return out
}
