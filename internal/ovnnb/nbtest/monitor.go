package nbtest

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"strings"
	"testing"
)

// RowUpdate is one row's change in an OVSDB "update" notification; a nil
// New means the row was deleted, a nil Old that it was inserted.
type RowUpdate struct {
	Old map[string]json.RawMessage `json:"old"`
	New map[string]json.RawMessage `json:"new"`
}

// Update is one notification: table -> row UUID -> change. ovsdb-server
// sends exactly one per committed transaction touching the monitored
// tables, so a watcher sees every intermediate committed state.
type Update map[string]map[string]RowUpdate

// Monitor is an independent raw OVSDB JSON-RPC connection with one
// monitor; it shares no code with the client under test.
type Monitor struct {
	conn    net.Conn
	Initial Update
	updates chan Update
	err     error // set before updates is closed
}

type rpcMsg struct {
	ID     json.RawMessage   `json:"id"`
	Method string            `json:"method"`
	Params []json.RawMessage `json:"params"`
	Result json.RawMessage   `json:"result"`
	Error  json.RawMessage   `json:"error"`
}

// Monitor opens a connection and monitors the given columns of the given
// tables; it is closed by t.Cleanup.
func (s *Server) Monitor(t testing.TB, columns map[string][]string) *Monitor {
	t.Helper()
	conn, err := net.Dial("unix", s.sock)
	if err != nil {
		t.Fatalf("nbtest: monitor dial %s: %v", s.sock, err)
	}
	t.Cleanup(func() { _ = conn.Close() })
	reqs := map[string]any{}
	for table, cols := range columns {
		reqs[table] = map[string]any{"columns": cols}
	}
	req := map[string]any{"id": "nbtest-monitor", "method": "monitor",
		"params": []any{"OVN_Northbound", "nbtest", reqs}}
	if err := json.NewEncoder(conn).Encode(req); err != nil {
		t.Fatalf("nbtest: monitor request: %v", err)
	}
	m := &Monitor{conn: conn, updates: make(chan Update, 1024)}
	dec := json.NewDecoder(conn)
	var reply rpcMsg
	if err := dec.Decode(&reply); err != nil {
		t.Fatalf("nbtest: monitor reply: %v", err)
	}
	if len(reply.Error) > 0 && string(reply.Error) != "null" {
		t.Fatalf("nbtest: monitor refused: %s", reply.Error)
	}
	if err := json.Unmarshal(reply.Result, &m.Initial); err != nil {
		t.Fatalf("nbtest: monitor initial state: %v", err)
	}
	go m.read(dec)
	return m
}

func (m *Monitor) read(dec *json.Decoder) {
	enc := json.NewEncoder(m.conn)
	for {
		var msg rpcMsg
		if err := dec.Decode(&msg); err != nil {
			m.err = err
			close(m.updates)
			return
		}
		switch msg.Method {
		case "echo":
			_ = enc.Encode(map[string]any{"id": msg.ID, "result": msg.Params, "error": nil})
		case "update":
			var u Update
			if len(msg.Params) != 2 || json.Unmarshal(msg.Params[1], &u) != nil {
				m.err = fmt.Errorf("malformed update notification")
				close(m.updates)
				return
			}
			m.updates <- u
		}
	}
}

// Next returns the next update notification.
func (m *Monitor) Next(ctx context.Context) (Update, error) {
	select {
	case u, ok := <-m.updates:
		if !ok {
			return nil, fmt.Errorf("monitor connection ended: %w", m.err)
		}
		return u, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// String decodes a string column of a row image.
func String(row map[string]json.RawMessage, col string) string {
	var s string
	_ = json.Unmarshal(row[col], &s)
	return s
}

// Refs returns the names an OVN match references with sigil ("@" for
// port groups, "$" for address sets).
func Refs(match, sigil string) []string {
	var out []string
	for _, f := range strings.FieldsFunc(match, func(r rune) bool {
		return !(r == '_' || r == '.' || r == '@' || r == '$' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9')
	}) {
		if name, ok := strings.CutPrefix(f, sigil); ok && name != "" {
			out = append(out, name)
		}
	}
	return out
}
