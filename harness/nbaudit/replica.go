package nbaudit

import (
	"fmt"
	"maps"
	"slices"

	"github.com/nqos/nqos/internal/ovnnb"
	"github.com/nqos/nqos/internal/ovnnb/nbdb"
	"github.com/nqos/nqos/internal/ovsdbmon"
)

// watchedTables are the tables the audit reads, every column monitored,
// so every committed change to them is one audited state.
var watchedTables = []string{nbdb.QoSTable, nbdb.PortGroupTable, nbdb.AddressSetTable, nbdb.LogicalSwitchTable}

func monitoredColumns() ovsdbmon.Columns {
	cols := ovsdbmon.Columns{}
	for _, t := range watchedTables {
		cols[t] = nil
	}
	return cols
}

// replica is the watcher's copy of the audited tables, decoded once per
// changed row; only the watcher's goroutine touches it.
type replica struct {
	qos      map[string]nbdb.QoS
	pgs      map[string]nbdb.PortGroup
	ases     map[string]nbdb.AddressSet
	switches map[string]nbdb.LogicalSwitch
}

func newReplica() *replica {
	return &replica{qos: map[string]nbdb.QoS{}, pgs: map[string]nbdb.PortGroup{},
		ases: map[string]nbdb.AddressSet{}, switches: map[string]nbdb.LogicalSwitch{}}
}

// apply moves the replica to the state after u.
func (r *replica) apply(u ovsdbmon.Update) error {
	return firstErr(
		applyTable(r.qos, u[nbdb.QoSTable], decodeQoS),
		applyTable(r.pgs, u[nbdb.PortGroupTable], decodePortGroup),
		applyTable(r.ases, u[nbdb.AddressSetTable], decodeAddressSet),
		applyTable(r.switches, u[nbdb.LogicalSwitchTable], decodeSwitch))
}

func applyTable[T any](rows map[string]T, changes map[string]ovsdbmon.RowUpdate, decode func(string, ovsdbmon.Row) (T, error)) error {
	for uuid, ch := range changes {
		if ch.New == nil {
			delete(rows, uuid)
			continue
		}
		row, err := decode(uuid, ch.New)
		if err != nil {
			return err
		}
		rows[uuid] = row
	}
	return nil
}

// tables is the replica in ovnnb's read form, each table sorted by UUID.
func (r *replica) tables() ovnnb.Tables {
	return ovnnb.Tables{QoS: sortedRows(r.qos), PortGroups: sortedRows(r.pgs),
		AddressSets: sortedRows(r.ases), Switches: sortedRows(r.switches)}
}

func sortedRows[T any](rows map[string]T) []T {
	out := make([]T, 0, len(rows))
	for _, u := range slices.Sorted(maps.Keys(rows)) {
		out = append(out, rows[u])
	}
	return out
}

func decodeQoS(uuid string, r ovsdbmon.Row) (nbdb.QoS, error) {
	q := nbdb.QoS{UUID: uuid}
	err := firstErr(ovsdbmon.Decode(r, "match", ovsdbmon.String, &q.Match),
		ovsdbmon.Decode(r, "external_ids", ovsdbmon.StringMap, &q.ExternalIDs))
	return q, rowErr(nbdb.QoSTable, uuid, err)
}

func decodePortGroup(uuid string, r ovsdbmon.Row) (nbdb.PortGroup, error) {
	p := nbdb.PortGroup{UUID: uuid}
	err := decodeNamed(nbdb.PortGroupTable, uuid, r, &p.Name, &p.ExternalIDs)
	return p, err
}

func decodeAddressSet(uuid string, r ovsdbmon.Row) (nbdb.AddressSet, error) {
	a := nbdb.AddressSet{UUID: uuid}
	err := decodeNamed(nbdb.AddressSetTable, uuid, r, &a.Name, &a.ExternalIDs)
	return a, err
}

// decodeNamed decodes the name and external_ids columns of a row.
func decodeNamed(table, uuid string, r ovsdbmon.Row, name *string, ids *map[string]string) error {
	return rowErr(table, uuid, firstErr(ovsdbmon.Decode(r, "name", ovsdbmon.String, name),
		ovsdbmon.Decode(r, "external_ids", ovsdbmon.StringMap, ids)))
}

func decodeSwitch(uuid string, r ovsdbmon.Row) (nbdb.LogicalSwitch, error) {
	ls := nbdb.LogicalSwitch{UUID: uuid}
	err := firstErr(ovsdbmon.Decode(r, "name", ovsdbmon.String, &ls.Name),
		ovsdbmon.Decode(r, "qos_rules", ovsdbmon.UUIDSet, &ls.QOSRules))
	return ls, rowErr(nbdb.LogicalSwitchTable, uuid, err)
}

func rowErr(table, uuid string, err error) error {
	if err != nil {
		return fmt.Errorf("decode %s row %s: %w", table, uuid, err)
	}
	return nil
}

func firstErr(errs ...error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}
