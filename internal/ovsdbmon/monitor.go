// Package ovsdbmon owns the one raw OVSDB monitor (RFC 7047 JSON-RPC over
// unix:, tcp: or ssl:). A Monitor registers one "monitor" request on chosen
// tables and columns and delivers every "update" notification with its
// arrival time: ovsdb-server sends one per committed transaction touching
// the monitored columns while the reader keeps up, and the reader never
// waits for the consumer, so every committed state is seen. It answers the
// server's echo probes, offers an echo round trip (Sync) that is ordered
// after every transaction committed before it, and returns every error. It
// shares no code with libovsdb, so tests and audits built on it observe
// the database independently of the client under test. decode.go decodes
// OVSDB JSON values (atoms, sets, maps).
package ovsdbmon

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"strings"
	"sync"
	"time"
)

// DefaultDatabase is the database monitored when Options.Database is empty.
const DefaultDatabase = "OVN_Northbound"

// dialTimeout bounds the connection set-up when ctx has no earlier deadline.
const dialTimeout = 10 * time.Second

// Request ids of the monitor and of the Sync round trips.
const (
	monitorReqID = "ovsdbmon-monitor"
	monitorID    = "ovsdbmon"
	syncPrefix   = "ovsdbmon-sync-"
)

// ErrClosed is wrapped by Err and Next after Close.
var ErrClosed = errors.New("ovsdb monitor closed")

// Columns names the monitored columns per table; an empty list monitors
// every column of that table.
type Columns map[string][]string

// RowUpdate is one row's change in a notification: Old is nil for an
// insert, New is nil for a delete. New holds every monitored column; Old
// (on a modify) the monitored columns that changed, before the change.
type RowUpdate struct {
	Old Row `json:"old"`
	New Row `json:"new"`
}

// Update is table name -> row UUID -> change.
type Update map[string]map[string]RowUpdate

// Notification is one update message and when the reader received it.
type Notification struct {
	// Seq counts the notifications from 1; the initial contents are not
	// a notification.
	Seq    int
	At     time.Time
	Update Update
}

// Options configure Dial.
type Options struct {
	// Database is the monitored database; empty is DefaultDatabase.
	Database string
	// Tables are the monitored tables and columns (at least one table).
	Tables Columns
	// TLS configures ssl: addresses; it is required for them.
	TLS *tls.Config
	// Handle, when set, receives the initial contents (as Seq 0, before
	// Dial returns) and then every notification on the reader goroutine
	// in order, as soon as it is decoded (the lowest-latency way to act
	// on a transaction); it must not block or call back into the Monitor.
	// Notifications are then not queued for Next.
	Handle func(Notification)
}

// Monitor is one connection carrying one monitor.
type Monitor struct {
	conn    net.Conn
	initial Update
	handle  func(Notification)
	queue   queue
	done    chan struct{}

	wmu sync.Mutex // serialises writes (echo replies, Sync requests)
	enc *json.Encoder

	mu      sync.Mutex
	seq     int
	err     error
	syncs   map[string]chan struct{}
	syncSeq int
}

// rpcMsg is any JSON-RPC message: request, reply or notification.
type rpcMsg struct {
	ID     json.RawMessage   `json:"id"`
	Method string            `json:"method"`
	Params []json.RawMessage `json:"params"`
	Result json.RawMessage   `json:"result"`
	Error  json.RawMessage   `json:"error"`
}

// Dial connects to addr ("unix:/path", "tcp:host:port" or
// "ssl:host:port"), registers the monitor and returns once the initial
// contents arrived: every transaction committed afterwards is delivered.
func Dial(ctx context.Context, addr string, opts Options) (*Monitor, error) {
	if len(opts.Tables) == 0 {
		return nil, fmt.Errorf("ovsdb monitor %s: no tables to monitor", addr)
	}
	conn, err := dial(ctx, addr, opts.TLS)
	if err != nil {
		return nil, err
	}
	m := &Monitor{conn: conn, handle: opts.Handle, done: make(chan struct{}),
		enc: json.NewEncoder(conn), syncs: map[string]chan struct{}{}}
	m.queue.init()
	dec := json.NewDecoder(conn)
	if err := m.register(ctx, dec, opts); err != nil {
		_ = conn.Close()
		return nil, fmt.Errorf("ovsdb monitor %s: %w", addr, err)
	}
	if m.handle != nil {
		m.handle(Notification{At: time.Now(), Update: m.initial})
	}
	go m.read(dec)
	return m, nil
}

// dial opens the connection named by an OVSDB address.
func dial(ctx context.Context, addr string, tlsCfg *tls.Config) (net.Conn, error) {
	method, target, ok := strings.Cut(addr, ":")
	if !ok || target == "" {
		return nil, fmt.Errorf("ovsdb address %q: want unix:/path, tcp:host:port or ssl:host:port", addr)
	}
	ctx, cancel := context.WithTimeout(ctx, dialTimeout)
	defer cancel()
	var d net.Dialer
	var conn net.Conn
	var err error
	switch method {
	case "unix", "tcp":
		conn, err = d.DialContext(ctx, method, target)
	case "ssl":
		if tlsCfg == nil {
			return nil, fmt.Errorf("ovsdb address %q: ssl needs a TLS configuration", addr)
		}
		td := tls.Dialer{NetDialer: &d, Config: tlsCfg}
		conn, err = td.DialContext(ctx, "tcp", target)
	default:
		return nil, fmt.Errorf("ovsdb address %q: method %q is not unix, tcp or ssl", addr, method)
	}
	if err != nil {
		return nil, fmt.Errorf("dial ovsdb %s: %w", addr, err)
	}
	return conn, nil
}

// register sends the monitor request and reads up to its reply,
// answering echo probes on the way.
func (m *Monitor) register(ctx context.Context, dec *json.Decoder, opts Options) error {
	db := opts.Database
	if db == "" {
		db = DefaultDatabase
	}
	reqs := map[string]any{}
	for table, cols := range opts.Tables {
		if len(cols) == 0 {
			reqs[table] = map[string]any{}
		} else {
			reqs[table] = map[string]any{"columns": cols}
		}
	}
	if err := m.write(map[string]any{"id": monitorReqID, "method": "monitor",
		"params": []any{db, monitorID, reqs}}); err != nil {
		return err
	}
	deadline := time.Now().Add(dialTimeout)
	if d, ok := ctx.Deadline(); ok && d.Before(deadline) {
		deadline = d
	}
	_ = m.conn.SetReadDeadline(deadline)
	defer func() { _ = m.conn.SetReadDeadline(time.Time{}) }()
	stop := context.AfterFunc(ctx, func() { _ = m.conn.SetReadDeadline(time.Now()) })
	defer stop()
	for {
		var msg rpcMsg
		if err := dec.Decode(&msg); err != nil {
			return fmt.Errorf("read monitor reply: %w", errors.Join(err, ctx.Err()))
		}
		if msg.Method == "echo" {
			if err := m.answerEcho(msg); err != nil {
				return err
			}
			continue
		}
		if string(msg.ID) != `"`+monitorReqID+`"` {
			continue
		}
		if hasError(msg.Error) {
			return fmt.Errorf("monitor refused: %s", msg.Error)
		}
		if err := json.Unmarshal(msg.Result, &m.initial); err != nil {
			return fmt.Errorf("decode initial contents: %w", err)
		}
		return nil
	}
}

func hasError(raw json.RawMessage) bool { return len(raw) > 0 && string(raw) != "null" }

// read delivers notifications until the connection fails or is closed.
func (m *Monitor) read(dec *json.Decoder) {
	defer close(m.done)
	for {
		var msg rpcMsg
		if err := dec.Decode(&msg); err != nil {
			m.fail(fmt.Errorf("read ovsdb monitor: %w", err))
			return
		}
		at := time.Now()
		var err error
		switch {
		case msg.Method == "echo":
			err = m.answerEcho(msg)
		case msg.Method == "update":
			err = m.deliver(msg, at)
		case msg.Method == "":
			m.synced(msg)
		}
		if err != nil {
			m.fail(err)
			_ = m.conn.Close()
			return
		}
	}
}

// deliver decodes one update notification and hands it on.
func (m *Monitor) deliver(msg rpcMsg, at time.Time) error {
	if len(msg.Params) != 2 {
		return fmt.Errorf("ovsdb monitor: update notification with %d params, want 2", len(msg.Params))
	}
	var u Update
	if err := json.Unmarshal(msg.Params[1], &u); err != nil {
		return fmt.Errorf("ovsdb monitor: decode update notification: %w", err)
	}
	m.mu.Lock()
	m.seq++
	n := Notification{Seq: m.seq, At: at, Update: u}
	m.mu.Unlock()
	if m.handle != nil {
		m.handle(n)
		return nil
	}
	m.queue.push(n)
	return nil
}

func (m *Monitor) answerEcho(msg rpcMsg) error {
	params := msg.Params
	if params == nil {
		params = []json.RawMessage{}
	}
	return m.write(map[string]any{"id": msg.ID, "result": params, "error": nil})
}

func (m *Monitor) write(v any) error {
	m.wmu.Lock()
	defer m.wmu.Unlock()
	if err := m.enc.Encode(v); err != nil {
		return fmt.Errorf("write to ovsdb: %w", err)
	}
	return nil
}

// fail records the first error that ended the monitor.
func (m *Monitor) fail(err error) {
	m.mu.Lock()
	if m.err == nil {
		m.err = err
	}
	err = m.err
	m.mu.Unlock()
	m.queue.fail(err)
}

// Initial is the monitored contents when the monitor was registered.
func (m *Monitor) Initial() Update { return m.initial }

// Next returns the next queued notification. Once the connection ended it
// returns the queued notifications first, then the error that ended it.
// With Options.Handle set nothing is queued and Next only reports the end.
func (m *Monitor) Next(ctx context.Context) (Notification, error) {
	return m.queue.pop(ctx)
}

// Count is how many notifications have been received.
func (m *Monitor) Count() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.seq
}

// Done is closed when the monitor ended (connection failure or Close).
func (m *Monitor) Done() <-chan struct{} { return m.done }

// Err is why the monitor ended, nil while it runs.
func (m *Monitor) Err() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.err
}

// Close ends the connection and waits for the reader; later calls to
// Next and Err report ErrClosed (unless the connection had failed first).
func (m *Monitor) Close() error {
	m.fail(ErrClosed)
	err := m.conn.Close()
	<-m.done
	if err != nil && !errors.Is(err, net.ErrClosed) {
		return fmt.Errorf("close ovsdb monitor: %w", err)
	}
	return nil
}
