package localnetenv

import (
	"reflect"
	"strings"
	"testing"

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
