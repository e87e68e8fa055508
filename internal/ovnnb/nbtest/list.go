package nbtest

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
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
				r.scalar("match", &q.Match), intMap(r["action"], &q.Action), intMap(r["bandwidth"], &q.Bandwidth),
				strMap(r["external_ids"], &q.ExternalIDs))
		})
}

// ListPortGroups returns every Port_Group row, sorted by UUID.
func (s *Server) ListPortGroups() ([]PortGroup, error) {
	return listAs(s, "Port_Group", []string{"_uuid", "name", "ports", "external_ids"},
		func(r row, p *PortGroup) error {
			return firstErr(r.uuid("_uuid", &p.UUID), r.scalar("name", &p.Name),
				uuidSet(r["ports"], &p.Ports), strMap(r["external_ids"], &p.ExternalIDs))
		})
}

// ListAddressSets returns every Address_Set row, sorted by UUID.
func (s *Server) ListAddressSets() ([]AddressSet, error) {
	return listAs(s, "Address_Set", []string{"_uuid", "name", "addresses", "external_ids"},
		func(r row, a *AddressSet) error {
			return firstErr(r.uuid("_uuid", &a.UUID), r.scalar("name", &a.Name),
				strSet(r["addresses"], &a.Addresses), strMap(r["external_ids"], &a.ExternalIDs))
		})
}

// ListSwitches returns every Logical_Switch row, sorted by UUID.
func (s *Server) ListSwitches() ([]LogicalSwitch, error) {
	return listAs(s, "Logical_Switch", []string{"_uuid", "name", "qos_rules"},
		func(r row, ls *LogicalSwitch) error {
			return firstErr(r.uuid("_uuid", &ls.UUID), r.scalar("name", &ls.Name), uuidSet(r["qos_rules"], &ls.QoSRules))
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
	raw, ok := r[col]
	if !ok {
		return fmt.Errorf("column %s missing", col)
	}
	if err := json.Unmarshal(raw, dst); err != nil {
		return fmt.Errorf("column %s: %w", col, err)
	}
	return nil
}

func (r row) uuid(col string, dst *string) error {
	raw, ok := r[col]
	if !ok {
		return fmt.Errorf("column %s missing", col)
	}
	return decodeUUID(raw, dst)
}

// decodeUUID decodes ["uuid", "<uuid>"].
func decodeUUID(raw json.RawMessage, dst *string) error {
	var pair [2]string
	if err := json.Unmarshal(raw, &pair); err != nil || pair[0] != "uuid" {
		return fmt.Errorf("not a uuid atom: %s", raw)
	}
	*dst = pair[1]
	return nil
}

// setElems splits an OVSDB set (["set", [...]] or one bare atom).
func setElems(raw json.RawMessage) ([]json.RawMessage, error) {
	var tagged []json.RawMessage
	if err := json.Unmarshal(raw, &tagged); err == nil && len(tagged) == 2 {
		var tag string
		if json.Unmarshal(tagged[0], &tag) == nil && tag == "set" {
			var elems []json.RawMessage
			if err := json.Unmarshal(tagged[1], &elems); err != nil {
				return nil, fmt.Errorf("set body: %w", err)
			}
			return elems, nil
		}
	}
	return []json.RawMessage{raw}, nil
}

func uuidSet(raw json.RawMessage, dst *[]string) error {
	elems, err := setElems(raw)
	if err != nil {
		return err
	}
	out := make([]string, len(elems))
	for i, e := range elems {
		if err := decodeUUID(e, &out[i]); err != nil {
			return err
		}
	}
	sort.Strings(out)
	*dst = out
	return nil
}

func strSet(raw json.RawMessage, dst *[]string) error {
	elems, err := setElems(raw)
	if err != nil {
		return err
	}
	out := make([]string, len(elems))
	for i, e := range elems {
		if err := json.Unmarshal(e, &out[i]); err != nil {
			return fmt.Errorf("string set element %s: %w", e, err)
		}
	}
	sort.Strings(out)
	*dst = out
	return nil
}

// mapPairs decodes ["map", [[k, v], ...]].
func mapPairs(raw json.RawMessage) ([][2]json.RawMessage, error) {
	var tagged []json.RawMessage
	if err := json.Unmarshal(raw, &tagged); err != nil || len(tagged) != 2 {
		return nil, fmt.Errorf("not a map: %s", raw)
	}
	var pairs [][2]json.RawMessage
	if err := json.Unmarshal(tagged[1], &pairs); err != nil {
		return nil, fmt.Errorf("map body %s: %w", raw, err)
	}
	return pairs, nil
}

func strMap(raw json.RawMessage, dst *map[string]string) error {
	pairs, err := mapPairs(raw)
	if err != nil {
		return err
	}
	out := make(map[string]string, len(pairs))
	for _, p := range pairs {
		var k, v string
		if err := firstErr(json.Unmarshal(p[0], &k), json.Unmarshal(p[1], &v)); err != nil {
			return fmt.Errorf("string map entry: %w", err)
		}
		out[k] = v
	}
	*dst = out
	return nil
}

func intMap(raw json.RawMessage, dst *map[string]int) error {
	pairs, err := mapPairs(raw)
	if err != nil {
		return err
	}
	out := make(map[string]int, len(pairs))
	for _, p := range pairs {
		var k string
		var v int
		if err := firstErr(json.Unmarshal(p[0], &k), json.Unmarshal(p[1], &v)); err != nil {
			return fmt.Errorf("integer map entry: %w", err)
		}
		out[k] = v
	}
	*dst = out
	return nil
}
