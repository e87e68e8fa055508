package ovnnb

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"strings"
	"sync"
	"time"

	"github.com/ovn-kubernetes/libovsdb/ovsdb"
)

// monitorID is the json-value a Watcher's monitor is registered under.
const monitorID = "nqos-watch"

// monConn is a raw OVSDB JSON-RPC connection carrying one "monitor"
// (RFC 7047 4.1.5). ovsdb-server sends one "update" notification per
// flush of committed transactions, so the state after every notification
// is a state that existed in the database. libovsdb's cache applies
// updates row by row and reports rows, not transactions, which is why
// the watcher reads the notifications itself.
type monConn struct {
	conn  net.Conn
	dec   *json.Decoder
	encMu sync.Mutex
	enc   *json.Encoder
}

// rpcMsg is any JSON-RPC message: request, reply or notification.
type rpcMsg struct {
	ID     json.RawMessage   `json:"id"`
	Method string            `json:"method"`
	Params []json.RawMessage `json:"params"`
	Result json.RawMessage   `json:"result"`
	Error  json.RawMessage   `json:"error"`
}

// splitAddr turns "unix:/path" or "tcp:host:port" into net.Dial terms.
func splitAddr(addr string) (network, address string, err error) {
	if p, ok := strings.CutPrefix(addr, "unix:"); ok && p != "" {
		return "unix", p, nil
	}
	if hp, ok := strings.CutPrefix(addr, "tcp:"); ok && hp != "" {
		return "tcp", hp, nil
	}
	return "", "", fmt.Errorf("NB address %q: want unix:/path or tcp:host:port", addr)
}

// dialMonitor connects to addr and monitors every column of tables; it
// returns the connection and the initial contents.
func dialMonitor(ctx context.Context, addr string, tables []string) (*monConn, ovsdb.TableUpdates, error) {
	network, address, err := splitAddr(addr)
	if err != nil {
		return nil, nil, err
	}
	d := net.Dialer{Timeout: connectTimeout}
	conn, err := d.DialContext(ctx, network, address)
	if err != nil {
		return nil, nil, fmt.Errorf("dial NB %s: %w", addr, err)
	}
	m := &monConn{conn: conn, dec: json.NewDecoder(conn), enc: json.NewEncoder(conn)}
	initial, err := m.monitor(tables)
	if err != nil {
		_ = conn.Close()
		return nil, nil, fmt.Errorf("monitor NB %s: %w", addr, err)
	}
	return m, initial, nil
}

// monitor sends the monitor request and waits for its reply.
func (m *monConn) monitor(tables []string) (ovsdb.TableUpdates, error) {
	reqs := map[string]any{}
	for _, t := range tables {
		reqs[t] = map[string]any{} // every column, every change
	}
	const id = "nqos-watch-monitor"
	if err := m.send(map[string]any{"id": id, "method": "monitor",
		"params": []any{"OVN_Northbound", monitorID, reqs}}); err != nil {
		return nil, err
	}
	// The reply is the first message for this connection, but answer
	// echoes in case the server probes first.
	_ = m.conn.SetReadDeadline(time.Now().Add(connectTimeout))
	defer func() { _ = m.conn.SetReadDeadline(time.Time{}) }()
	for {
		var msg rpcMsg
		if err := m.dec.Decode(&msg); err != nil {
			return nil, fmt.Errorf("read monitor reply: %w", err)
		}
		if msg.Method == "echo" {
			if err := m.answerEcho(msg); err != nil {
				return nil, err
			}
			continue
		}
		if string(msg.ID) != `"`+id+`"` {
			continue
		}
		if len(msg.Error) > 0 && string(msg.Error) != "null" {
			return nil, fmt.Errorf("monitor refused: %s", msg.Error)
		}
		var initial ovsdb.TableUpdates
		if err := json.Unmarshal(msg.Result, &initial); err != nil {
			return nil, fmt.Errorf("decode initial state: %w", err)
		}
		return initial, nil
	}
}

// next blocks until the next update notification and returns its table
// updates undecoded; it answers echo requests on the way.
func (m *monConn) next() (json.RawMessage, error) {
	for {
		var msg rpcMsg
		if err := m.dec.Decode(&msg); err != nil {
			return nil, fmt.Errorf("read NB monitor: %w", err)
		}
		switch msg.Method {
		case "echo":
			if err := m.answerEcho(msg); err != nil {
				return nil, err
			}
		case "update":
			if len(msg.Params) != 2 {
				return nil, fmt.Errorf("NB monitor: update notification with %d params, want 2", len(msg.Params))
			}
			return msg.Params[1], nil
		}
	}
}

func (m *monConn) answerEcho(msg rpcMsg) error {
	params := msg.Params
	if params == nil {
		params = []json.RawMessage{}
	}
	return m.send(map[string]any{"id": msg.ID, "result": params, "error": nil})
}

func (m *monConn) send(v any) error {
	m.encMu.Lock()
	defer m.encMu.Unlock()
	if err := m.enc.Encode(v); err != nil {
		return fmt.Errorf("write to NB: %w", err)
	}
	return nil
}

func (m *monConn) Close() error { return m.conn.Close() }

// received is one update notification and when it arrived.
type received struct {
	at      time.Time
	updates json.RawMessage
}

// updateQueue is an unbounded FIFO between the connection reader and the
// auditor: the reader never waits for an audit, so the server's send
// backlog stays empty and it keeps sending one notification per
// transaction instead of merging them.
type updateQueue struct {
	mu    sync.Mutex
	items []received
	err   error
	ready chan struct{}
}

func newUpdateQueue() *updateQueue { return &updateQueue{ready: make(chan struct{}, 1)} }

func (q *updateQueue) push(r received) {
	q.mu.Lock()
	q.items = append(q.items, r)
	q.mu.Unlock()
	q.signal()
}

// fail ends the queue: pop returns err once the queued items are taken.
func (q *updateQueue) fail(err error) {
	q.mu.Lock()
	if q.err == nil {
		q.err = err
	}
	q.mu.Unlock()
	q.signal()
}

func (q *updateQueue) signal() {
	select {
	case q.ready <- struct{}{}:
	default:
	}
}

func (q *updateQueue) pop(ctx context.Context) (received, error) {
	for {
		q.mu.Lock()
		if len(q.items) > 0 {
			r := q.items[0]
			q.items[0] = received{}
			q.items = q.items[1:]
			q.mu.Unlock()
			return r, nil
		}
		err := q.err
		q.mu.Unlock()
		if err != nil {
			return received{}, err
		}
		select {
		case <-ctx.Done():
			return received{}, ctx.Err()
		case <-q.ready:
		}
	}
}
