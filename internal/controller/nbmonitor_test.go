package controller

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nqos/nqos/internal/ovnnb/nbtest"
	"github.com/nqos/nqos/internal/ovsdbmon"
)

// startRawMonitor monitors the columns of tables on an ovsdbmon
// connection (independent of libovsdb): the initial contents, then every
// committed transaction, go to onUpdate with their arrival time on the
// monitor's goroutine. onClose runs once when the connection ends. The
// monitor stops at test cleanup.
func startRawMonitor(t testing.TB, addr string, tables ovsdbmon.Columns, onUpdate func(ovsdbmon.Update, time.Time), onClose func(error)) *ovsdbmon.Monitor {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	m, err := ovsdbmon.Dial(ctx, addr, ovsdbmon.Options{Tables: tables,
		Handle: func(n ovsdbmon.Notification) { onUpdate(n.Update, n.At) }})
	if err != nil {
		t.Fatalf("nb monitor: %v", err)
	}
	stopped := make(chan struct{})
	go func() {
		select {
		case <-m.Done():
			onClose(m.Err())
		case <-stopped:
		}
	}()
	t.Cleanup(func() {
		close(stopped)
		_ = m.Close()
	})
	return m
}

// nbMonitor checks, after every NB transaction, that no QoS row
// references a missing port group or address set.
type nbMonitor struct {
	raw        *ovsdbmon.Monitor
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
	m.raw = startRawMonitor(t, addr, ovsdbmon.Columns{"QoS": {"match"}, "Port_Group": {"name"}, "Address_Set": {"name"}},
		func(u ovsdbmon.Update, _ time.Time) { m.apply(u) }, func(error) {})
	return m
}

// apply folds one transaction into the replica and checks it.
func (m *nbMonitor) apply(u ovsdbmon.Update) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.updates++
	for table, dst := range map[string]map[string]string{"QoS": m.matches, "Port_Group": m.groups, "Address_Set": m.sets} {
		col := "name"
		if table == "QoS" {
			col = "match"
		}
		for uuid, ru := range u[table] {
			if ru.New == nil {
				delete(dst, uuid)
				continue
			}
			var v string
			if err := ovsdbmon.Decode(ru.New, col, ovsdbmon.String, &v); err != nil {
				m.violations = append(m.violations, fmt.Sprintf("after update %d: %s %s: %v", m.updates, table, uuid, err))
				continue
			}
			dst[uuid] = v
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
	_ = m.raw.Close()
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
