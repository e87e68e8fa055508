package nbtest

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/nqos/nqos/internal/ovsdbmon"
)

// QoS is one row of `ovn-nbctl --format=json list QoS`.
type QoS struct {
	UUID        string
	Priority    int
	Direction   string
	Match       string
	Action      map[string]int
	Bandwidth   map[string]int
	ExternalIDs map[string]string
}

// PortGroup is one row of `list Port_Group`; Ports are LSP UUIDs.
type PortGroup struct {
	UUID        string
	Name        string
	Ports       []string
	ExternalIDs map[string]string
}

// AddressSet is one row of `list Address_Set`.
type AddressSet struct {
	UUID        string
	Name        string
	Addresses   []string
	ExternalIDs map[string]string
}

// LogicalSwitch is one row of `list Logical_Switch`.
type LogicalSwitch struct {
	UUID     string
	Name     string
	QoSRules []string
}

// LogicalSwitchPort is one row of `list Logical_Switch_Port`.
type LogicalSwitchPort struct {
	UUID string
	Name string
}

// nbctlTable is ovn-nbctl's --format=json output for a list command.
type nbctlTable struct {
	Headings []string            `json:"headings"`
	Data     [][]json.RawMessage `json:"data"`
}

// row is one decoded row: column name to raw OVSDB JSON value.
type row map[string]json.RawMessage

func (s *Server) list(table string, columns ...string) ([]row, error) {
	out, err := s.NBCtl("--format=json", "--columns="+strings.Join(columns, ","), "list", table)
	if err != nil {
		return nil, err
	}
	var t nbctlTable
	if err := json.Unmarshal([]byte(out), &t); err != nil {
		return nil, fmt.Errorf("decode ovn-nbctl list %s: %w", table, err)
	}
	rows := make([]row, 0, len(t.Data))
	for i, d := range t.Data {
		if len(d) != len(t.Headings) {
			return nil, fmt.Errorf("ovn-nbctl list %s: row %d has %d cells for %d headings", table, i, len(d), len(t.Headings))
		}
		r := row{}
		for j, h := range t.Headings {
			r[h] = d[j]
		}
		rows = append(rows, r)
	}
	sort.Slice(rows, func(i, j int) bool { return string(rows[i]["_uuid"]) < string(rows[j]["_uuid"]) })
	return rows, nil
}

// listAs lists table and decodes each row with decode.
func listAs[T any](s *Server, table string, columns []string, decode func(row, *T) error) ([]T, error) {
	rows, err := s.list(table, columns...)
	if err != nil {
		return nil, err
	}
	out := make([]T, len(rows))
	for i, r := range rows {
		if err := decode(r, &out[i]); err != nil {
			return nil, fmt.Errorf("decode %s row: %w", table, err)
		}
	}
	return out, nil
}

// ListQoS returns every QoS row, sorted by UUID.
func (s *Server) ListQoS() ([]QoS, error) {
	return listAs(s, "QoS", []string{"_uuid", "priority", "direction", "match", "action", "bandwidth", "external_ids"},
		func(r row, q *QoS) error {
			return firstErr(r.uuid("_uuid", &q.UUID), r.scalar("priority", &q.Priority), r.scalar("direction", &q.Direction),
				r.scalar("match", &q.Match), r.intMap("action", &q.Action), r.intMap("bandwidth", &q.Bandwidth),
				r.strMap("external_ids", &q.ExternalIDs))
		})
}

// ListPortGroups returns every Port_Group row, sorted by UUID.
func (s *Server) ListPortGroups() ([]PortGroup, error) {
	return listAs(s, "Port_Group", []string{"_uuid", "name", "ports", "external_ids"},
		func(r row, p *PortGroup) error {
			return firstErr(r.uuid("_uuid", &p.UUID), r.scalar("name", &p.Name),
				r.uuidSet("ports", &p.Ports), r.strMap("external_ids", &p.ExternalIDs))
		})
}

// ListAddressSets returns every Address_Set row, sorted by UUID.
func (s *Server) ListAddressSets() ([]AddressSet, error) {
	return listAs(s, "Address_Set", []string{"_uuid", "name", "addresses", "external_ids"},
		func(r row, a *AddressSet) error {
			return firstErr(r.uuid("_uuid", &a.UUID), r.scalar("name", &a.Name),
				r.strSet("addresses", &a.Addresses), r.strMap("external_ids", &a.ExternalIDs))
		})
}

// ListSwitches returns every Logical_Switch row, sorted by UUID.
func (s *Server) ListSwitches() ([]LogicalSwitch, error) {
	return listAs(s, "Logical_Switch", []string{"_uuid", "name", "qos_rules"},
		func(r row, ls *LogicalSwitch) error {
			return firstErr(r.uuid("_uuid", &ls.UUID), r.scalar("name", &ls.Name), r.uuidSet("qos_rules", &ls.QoSRules))
		})
}

// ListPorts returns every Logical_Switch_Port row, sorted by UUID.
func (s *Server) ListPorts() ([]LogicalSwitchPort, error) {
	return listAs(s, "Logical_Switch_Port", []string{"_uuid", "name"},
		func(r row, p *LogicalSwitchPort) error {
			return firstErr(r.uuid("_uuid", &p.UUID), r.scalar("name", &p.Name))
		})
}

func firstErr(errs ...error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

func (r row) scalar(col string, dst any) error {
	raw, err := ovsdbmon.Row(r).Column(col)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(raw, dst); err != nil {
		return fmt.Errorf("column %s: %w", col, err)
	}
	return nil
}

func (r row) uuid(col string, dst *string) error {
	return ovsdbmon.Decode(ovsdbmon.Row(r), col, ovsdbmon.UUID, dst)
}

func (r row) uuidSet(col string, dst *[]string) error {
	return ovsdbmon.Decode(ovsdbmon.Row(r), col, ovsdbmon.UUIDSet, dst)
}

func (r row) strSet(col string, dst *[]string) error {
	return ovsdbmon.Decode(ovsdbmon.Row(r), col, ovsdbmon.StringSet, dst)
}

func (r row) strMap(col string, dst *map[string]string) error {
	return ovsdbmon.Decode(ovsdbmon.Row(r), col, ovsdbmon.StringMap, dst)
}

func (r row) intMap(col string, dst *map[string]int) error {
	return ovsdbmon.Decode(ovsdbmon.Row(r), col, ovsdbmon.IntMap, dst)
}
