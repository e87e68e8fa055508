package controller

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nqos/nqos/internal/ovnnb/nbtest"
)

// rawMonitor is an OVSDB JSON-RPC monitor on the NB socket, independent
// of libovsdb: every "update" notification is one committed transaction,
// handed to onUpdate with its arrival time (the initial contents first).
type rawMonitor struct {
	conn net.Conn
	done chan struct{}
}

// rpcMsg is a JSON-RPC message of the OVSDB protocol.
type rpcMsg struct {
	Method string            `json:"method,omitempty"`
	Params []json.RawMessage `json:"params,omitempty"`
	Result json.RawMessage   `json:"result,omitempty"`
	Error  json.RawMessage   `json:"error,omitempty"`
	ID     any               `json:"id"`
}

// rowUpdate is one row of a table update: new is absent on delete.
type rowUpdate struct {
	New map[string]any `json:"new"`
}

type tableUpdates map[string]map[string]rowUpdate

// startRawMonitor monitors the columns of tables and returns once the
// initial contents were handed over; onClose runs when the connection
// ends. The monitor stops at test cleanup.
func startRawMonitor(t testing.TB, addr string, tables map[string][]string, onUpdate func(tableUpdates, time.Time), onClose func()) *rawMonitor {
	t.Helper()
	conn, err := net.Dial("unix", strings.TrimPrefix(addr, "unix:"))
	if err != nil {
		t.Fatalf("nb monitor: %v", err)
	}
	reqs := map[string]any{}
	for table, cols := range tables {
		reqs[table] = map[string]any{"columns": cols}
	}
	req := map[string]any{"method": "monitor", "id": 1, "params": []any{"OVN_Northbound", nil, reqs}}
	if err := json.NewEncoder(conn).Encode(req); err != nil {
		t.Fatalf("nb monitor request: %v", err)
	}
	m := &rawMonitor{conn: conn, done: make(chan struct{})}
	ready := make(chan struct{})
	go m.read(ready, onUpdate, onClose)
	<-ready
	t.Cleanup(m.stop)
	return m
}

func (m *rawMonitor) read(ready chan struct{}, onUpdate func(tableUpdates, time.Time), onClose func()) {
	defer close(m.done)
	defer onClose()
	first := true
	defer func() {
		if first {
			close(ready)
		}
	}()
	dec, enc := json.NewDecoder(m.conn), json.NewEncoder(m.conn)
	for {
		var msg rpcMsg
		if err := dec.Decode(&msg); err != nil {
			return
		}
		var raw json.RawMessage
		switch {
		case msg.Method == "echo":
			_ = enc.Encode(map[string]any{"id": msg.ID, "result": msg.Params, "error": nil})
			continue
		case msg.Method == "update" && len(msg.Params) == 2:
			raw = msg.Params[1]
		case msg.Method == "" && first:
			raw = msg.Result
		default:
			continue
		}
		var tu tableUpdates
		if err := json.Unmarshal(raw, &tu); err == nil {
			onUpdate(tu, time.Now())
		}
		if first {
			first = false
			close(ready)
		}
	}
}

func (m *rawMonitor) stop() {
	m.conn.Close()
	<-m.done
}

// nbMonitor checks, after every NB transaction, that no QoS row
// references a missing port group or address set.
type nbMonitor struct {
	raw        *rawMonitor
	mu         sync.Mutex
	matches    map[string]string // QoS uuid -> match
	groups     map[string]string // Port_Group uuid -> name
	sets       map[string]string // Address_Set uuid -> name
	violations []string
	updates    int
}

func startNBMonitor(t testing.TB, addr string) *nbMonitor {
	t.Helper()
	m := &nbMonitor{matches: map[string]string{}, groups: map[string]string{}, sets: map[string]string{}}
	m.raw = startRawMonitor(t, addr, map[string][]string{"QoS": {"match"}, "Port_Group": {"name"}, "Address_Set": {"name"}},
		func(tu tableUpdates, _ time.Time) { m.apply(tu) }, func() {})
	return m
}

// apply folds one transaction into the replica and checks it.
func (m *nbMonitor) apply(tu tableUpdates) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.updates++
	for table, dst := range map[string]map[string]string{"QoS": m.matches, "Port_Group": m.groups, "Address_Set": m.sets} {
		col := "name"
		if table == "QoS" {
			col = "match"
		}
		for uuid, ru := range tu[table] {
			if ru.New == nil {
				delete(dst, uuid)
			} else if v, ok := ru.New[col].(string); ok {
				dst[uuid] = v
			}
		}
	}
	m.check()
}

func (m *nbMonitor) check() {
	groups, sets := map[string]bool{}, map[string]bool{}
	for _, n := range m.groups {
		groups[n] = true
	}
	for _, n := range m.sets {
		sets[n] = true
	}
	for uuid, match := range m.matches {
		for _, ref := range refPattern.FindAllStringSubmatch(match, -1) {
			if (ref[0][0] == '@' && !groups[ref[1]]) || (ref[0][0] == '$' && !sets[ref[1]]) {
				m.violations = append(m.violations, fmt.Sprintf("after update %d: QoS %s (%q) references missing %s", m.updates, uuid, match, ref[0]))
			}
		}
	}
}

// caughtUp reports whether the replica holds exactly the QoS, Port_Group
// and Address_Set rows (by UUID) that ovn-nbctl lists now: once the NB is
// quiescent, every committed transaction has then been checked.
func (m *nbMonitor) caughtUp(srv *nbtest.Server) (bool, string) {
	qs, err1 := srv.ListQoS()
	pgs, err2 := srv.ListPortGroups()
	ases, err3 := srv.ListAddressSets()
	if err := errors.Join(err1, err2, err3); err != nil {
		return false, err.Error()
	}
	want := map[string][]string{}
	for _, q := range qs {
		want["QoS"] = append(want["QoS"], q.UUID)
	}
	for _, pg := range pgs {
		want["Port_Group"] = append(want["Port_Group"], pg.UUID)
	}
	for _, as := range ases {
		want["Address_Set"] = append(want["Address_Set"], as.UUID)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	for table, rows := range map[string]map[string]string{"QoS": m.matches, "Port_Group": m.groups, "Address_Set": m.sets} {
		got := slices.Sorted(maps.Keys(rows))
		if w := slices.Sorted(slices.Values(want[table])); !slices.Equal(got, w) {
			return false, fmt.Sprintf("after %d updates the monitor's %s is %v, the NB's %v", m.updates, table, got, w)
		}
	}
	return true, ""
}

// waitCaughtUp waits until the monitor has seen every committed
// transaction of a quiescent NB.
func (m *nbMonitor) waitCaughtUp(t testing.TB, srv *nbtest.Server) {
	t.Helper()
	eventually(t, "NB monitor to catch up with the NB", 5*time.Second, func() (bool, string) { return m.caughtUp(srv) })
}

// result stops the monitor and returns the violations and update count.
func (m *nbMonitor) result() ([]string, int) {
	m.raw.stop()
	m.mu.Lock()
	defer m.mu.Unlock()
	v := append([]string(nil), m.violations...)
	sort.Strings(v)
	return v, m.updates
}

// The monitor must see a dangling reference when one is committed.
func TestNBMonitorDetectsDanglingReference(t *testing.T) {
	srv := nbtest.Start(t)
	srv.MustNBCtl("ls-add", "sw")
	m := startNBMonitor(t, srv.Addr())
	srv.MustNBCtl("--", "--id=@q", "create", "QoS", "priority=10000", "direction=to-lport",
		`match="inport == @nosuchgroup && (ip4 || ip6)"`, "action:dscp=1", "--", "add", "Logical_Switch", "sw", "qos_rules", "@q")
	srv.MustNBCtl("pg-add", "okgroup")
	m.waitCaughtUp(t, srv)
	v, n := m.result()
	// Seen after the QoS transaction and again after the unrelated one.
	if len(v) != 2 || !strings.Contains(v[0], "@nosuchgroup") || !strings.Contains(v[1], "@nosuchgroup") {
		t.Fatalf("monitor saw %d transactions and violations %v; want @nosuchgroup after updates 2 and 3", n, v)
	}
}
