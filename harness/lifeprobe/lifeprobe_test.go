package lifeprobe

import (
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/nqos/nqos/internal/qos"
)

func TestDiffRows(t *testing.T) {
	row := func(dscp int) qos.QoSRow {
		return qos.QoSRow{Switch: "sw", Direction: qos.DirectionToLport, Priority: 10500, Match: "inport == @a1",
			Action: qos.Action{DSCP: dscp}, ExternalIDs: map[string]string{qos.PrimaryIDKey: "id0"}}
	}
	pg := qos.PortGroup{Name: "a1", Ports: []string{"p2", "p1"}, ExternalIDs: map[string]string{}}
	want := qos.Desired{PortGroups: []qos.PortGroup{pg}, QoS: []qos.QoSRow{row(46)}}
	pgSorted := pg
	pgSorted.Ports = []string{"p1", "p2"}
	if d := DiffRows(want, qos.Desired{PortGroups: []qos.PortGroup{pgSorted}, QoS: []qos.QoSRow{row(46)}}); !d.Empty() {
		t.Errorf("port order must not matter: %s", d)
	}
	d := DiffRows(want, qos.Desired{PortGroups: []qos.PortGroup{pg}, QoS: []qos.QoSRow{row(46), row(46), row(10)}})
	if len(d.Missing) != 0 || len(d.Extra) != 2 || !strings.Contains(d.Extra[0], `"dscp":10`) || !strings.Contains(d.Extra[1], `"dscp":46`) {
		t.Errorf("duplicate and changed row: got %s", d)
	}
	if d := DiffRows(want, qos.Desired{QoS: []qos.QoSRow{row(46)}}); len(d.Missing) != 1 || !strings.HasPrefix(d.Missing[0], "Port_Group ") {
		t.Errorf("missing port group: got %s", d)
	}
}

func TestLegacyMigrationOrder(t *testing.T) {
	seeded := SeededLegacy{AddressSet: "a1", QoSUUIDs: []string{"q1"}}
	pgIns := RowChange{Table: "Port_Group", Op: OpInsert, Name: "pg"}
	rewrite := RowChange{Table: "QoS", UUID: "q1", Op: OpModify, OldMatch: "ip4.src == {$a1} && ip4.dst == 1.2.3.4/32", Match: "inport == @pg && ip4.dst == 1.2.3.4/32"}
	setDel := RowChange{Table: "Address_Set", Op: OpDelete, Name: "a1"}
	rowDel := RowChange{Table: "QoS", UUID: "q1", Op: OpDelete}
	tx := func(seq int, cs ...RowChange) Transaction { return Transaction{Seq: seq, Changes: cs} }
	tests := []struct {
		name    string
		txs     []Transaction
		want    MigrationOrder
		wantErr string
	}{
		{"good", []Transaction{tx(1, pgIns, rewrite), tx(2, setDel)},
			MigrationOrder{PortGroupTx: 1, RewriteTx: []int{1}, SetDeleteTx: 2, NewMatches: []string{rewrite.Match}}, ""},
		{"set deleted with the rewrite", []Transaction{tx(1, pgIns, rewrite, setDel)},
			MigrationOrder{PortGroupTx: 1, RewriteTx: []int{1}, SetDeleteTx: 1, NewMatches: []string{rewrite.Match}}, "not after the last rewrite"},
		{"set deleted first", []Transaction{tx(1, pgIns), tx(2, setDel), tx(3, rewrite)},
			MigrationOrder{PortGroupTx: 1, RewriteTx: []int{3}, SetDeleteTx: 2, NewMatches: []string{rewrite.Match}}, "not after the last rewrite"},
		{"port group late", []Transaction{tx(1, rewrite), tx(2, pgIns), tx(3, setDel)},
			MigrationOrder{PortGroupTx: 2, RewriteTx: []int{1}, SetDeleteTx: 3, NewMatches: []string{rewrite.Match}}, "before its port group"},
		{"row replaced", []Transaction{tx(1, pgIns, rowDel), tx(2, setDel)},
			MigrationOrder{PortGroupTx: 1, RewriteTx: []int{0}, SetDeleteTx: 2, NewMatches: []string{""}}, "deleted in transaction 1 instead of rewritten"},
		{"nothing happened", nil, MigrationOrder{RewriteTx: []int{0}, NewMatches: []string{""}}, "never"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := LegacyMigrationOrder(tc.txs, seeded, "pg")
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("order = %+v, want %+v", got, tc.want)
			}
			if (tc.wantErr == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tc.wantErr)) {
				t.Errorf("error = %v, want one containing %q", err, tc.wantErr)
			}
		})
	}
}

func TestCountChanges(t *testing.T) {
	txs := []Transaction{
		{Seq: 1, Changes: []RowChange{{Table: "QoS", Op: OpInsert}, {Table: "Port_Group", Op: OpInsert}}},
		{Seq: 2, Changes: []RowChange{{Table: "QoS", Op: OpInsert}, {Table: "QoS", Op: OpDelete}}},
	}
	want := ChangeCounts{"QoS insert": 2, "QoS delete": 1, "Port_Group insert": 1}
	if got := CountChanges(txs); !reflect.DeepEqual(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
}

var t0 = time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)

func at(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }

func TestSpread(t *testing.T) {
	ms := func(v ...int) []time.Duration {
		var out []time.Duration
		for _, x := range v {
			out = append(out, time.Duration(x)*time.Millisecond)
		}
		return out
	}
	for _, tc := range []struct {
		name             string
		in               []time.Duration
		min, median, max time.Duration
	}{
		{"none", nil, 0, 0, 0},
		{"one", ms(7), 7 * time.Millisecond, 7 * time.Millisecond, 7 * time.Millisecond},
		{"odd", ms(30, 10, 20), 10 * time.Millisecond, 20 * time.Millisecond, 30 * time.Millisecond},
		{"even", ms(40, 10, 20, 30), 10 * time.Millisecond, 25 * time.Millisecond, 40 * time.Millisecond},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := NewSpread(tc.in)
			if s.Min != tc.min || s.Median != tc.median || s.Max != tc.max || !slices.Equal(s.Samples, tc.in) {
				t.Errorf("NewSpread(%v) = %+v, want min %v median %v max %v", tc.in, s, tc.min, tc.median, tc.max)
			}
		})
	}
}

func TestMemberRecorder(t *testing.T) {
	r := NewMembership()
	steps := []struct {
		at      time.Time
		members []string
	}{{at(0), []string{"a"}}, {at(5), []string{"a", "b"}}, {at(10), []string{"b"}}, {at(15), []string{"a", "b"}}, {at(20), nil}}
	for _, s := range steps {
		r.Observe(s.members, s.at)
	}
	for _, tc := range []struct {
		lsp          string
		joined, left time.Time
	}{{"a", at(0), at(10)}, {"b", at(5), at(20)}, {"c", time.Time{}, time.Time{}}} {
		j, l := r.Times(tc.lsp)
		if !j.Equal(tc.joined) || !l.Equal(tc.left) {
			t.Errorf("%s: joined %v left %v, want %v and %v", tc.lsp, j, l, tc.joined, tc.left)
		}
	}
}

func TestLSPClockKeepsFirstSighting(t *testing.T) {
	c := NewFirstSeen()
	c.AddAt("a", at(0))
	first, _ := c.At("a")
	c.AddAt("a", at(5)) // re-announced after a reconnect
	if again, _ := c.At("a"); !again.Equal(first) {
		t.Errorf("second sighting moved the time from %v to %v", first, again)
	}
	if _, ok := c.At("b"); ok {
		t.Error("unseen LSP has a time")
	}
}
