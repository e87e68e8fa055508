package coexist

import (
	"bufio"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
)

// The external_ids keys OVN-Kubernetes and nqos both write.
const (
	ownerTypeKey       = "k8s.ovn.org/owner-type"
	ownerControllerKey = "k8s.ovn.org/owner-controller"
	ownerTypeNQoS      = "NetworkQoS"
)

// Owner is who wrote a NetworkQoS row, from its owner-controller.
type Owner string

// The owners: OVN-Kubernetes' network controllers end in
// -network-controller, nqos's in -nqos-controller.
const (
	OwnerOVNKube Owner = "ovnkube"
	OwnerNQoS    Owner = "nqos"
	OwnerOther   Owner = "other"
)

// ownerOf classifies a row's external_ids; ok is false for rows that are
// not NetworkQoS rows (a namespace's address set, a cluster port group).
func ownerOf(ids map[string]string) (Owner, bool) {
	if ids[ownerTypeKey] != ownerTypeNQoS {
		return "", false
	}
	switch c := ids[ownerControllerKey]; {
	case strings.HasSuffix(c, "-nqos-controller"):
		return OwnerNQoS, true
	case strings.HasSuffix(c, "-network-controller"):
		return OwnerOVNKube, true
	default:
		return OwnerOther, true
	}
}

// Counts are the NetworkQoS rows of one table and owner: present in the
// initial state, then inserted, modified and deleted in the window.
type Counts struct {
	Initial, Insert, Modify, Delete int
}

// Flips is what the window must not hold: any insert, modify or delete.
func (c Counts) Flips() int { return c.Insert + c.Modify + c.Delete }

// Final is the number of rows at the window's end.
func (c Counts) Final() int { return c.Initial + c.Insert - c.Delete }

// TableWatch is one table's monitor, reduced.
type TableWatch struct {
	Table   string
	Updates int // update messages after the initial one
	// ByOwner counts NetworkQoS rows per owner.
	ByOwner map[Owner]*Counts
	// Takeovers are modifications that changed a row's owner.
	Takeovers []string
	// Changes describe each NetworkQoS row inserted, modified (with the
	// columns that changed) or deleted in the window.
	Changes []string
}

// monitorUpdate is one line of `ovsdb-client --format=json monitor`.
type monitorUpdate struct {
	Headings []string            `json:"headings"`
	Data     [][]json.RawMessage `json:"data"`
	Time     string              `json:"time"` // with --timestamp
}

// ParseMonitor reduces the output of `ovsdb-client --format=json monitor
// DB TABLE external_ids,...` for table. The first line must be the
// initial state (possibly empty: then ovsdb-client prints nothing for it,
// so an empty output is an error: the monitor never answered).
func ParseMonitor(table, out string) (*TableWatch, error) {
	w := &TableWatch{Table: table, ByOwner: map[Owner]*Counts{}}
	sc := bufio.NewScanner(strings.NewReader(out))
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	first := true
	sawInitial := false
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" {
			continue
		}
		var u monitorUpdate
		if err := json.Unmarshal([]byte(line), &u); err != nil {
			return nil, fmt.Errorf("monitor of %s: line %q: %w", table, abbrev(line), err)
		}
		if err := w.add(u, first, &sawInitial); err != nil {
			return nil, fmt.Errorf("monitor of %s: %w", table, err)
		}
		first = false
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("monitor of %s: %w", table, err)
	}
	if !sawInitial {
		return nil, fmt.Errorf("monitor of %s: no initial state received", table)
	}
	return w, nil
}

// add counts one update message; the old row of a modification is
// remembered to compare its owner with the new one.
func (w *TableWatch) add(u monitorUpdate, first bool, sawInitial *bool) error {
	col := map[string]int{}
	for i, h := range u.Headings {
		if _, dup := col[h]; !dup {
			col[h] = i
		}
	}
	ri, ai, ei := col["row"], col["action"], col["external_ids"]
	if _, ok := col["external_ids"]; !ok {
		return fmt.Errorf("headings %v: no external_ids column", u.Headings)
	}
	if !first {
		w.Updates++
	}
	old := map[string]Owner{}
	changed := map[string][]string{}
	lastOld := ""
	for _, d := range u.Data {
		if len(d) <= max(ri, ai) {
			return fmt.Errorf("row of %d columns, headings %v", len(d), u.Headings)
		}
		var uuid, action string
		if err := json.Unmarshal(d[ri], &uuid); err != nil {
			return fmt.Errorf("row uuid: %w", err)
		}
		if err := json.Unmarshal(d[ai], &action); err != nil {
			return fmt.Errorf("row %s action: %w", uuid, err)
		}
		if action == "old" {
			// the old row of a modification carries only the changed
			// columns (null for the others): an owner only when
			// external_ids changed; its "new" row follows, without uuid
			lastOld = uuid
			for i, h := range u.Headings {
				if i != ri && i != ai && i < len(d) && string(d[i]) != "null" {
					changed[uuid] = append(changed[uuid], h)
				}
			}
			if len(d) > ei {
				if ids, err := ovsdbMap(d[ei]); err == nil && len(ids) > 0 {
					old[uuid], _ = ownerOf(ids)
				}
			}
			continue
		}
		if action == "new" && uuid == "" {
			uuid = lastOld
		}
		if len(d) <= ei {
			return fmt.Errorf("row %s (%s) of %d columns, headings %v", uuid, action, len(d), u.Headings)
		}
		ids, err := ovsdbMap(d[ei])
		if err != nil {
			return fmt.Errorf("row %s external_ids: %w", uuid, err)
		}
		owner, nqos := ownerOf(ids)
		if action == "initial" {
			if !first {
				return fmt.Errorf("row %s: initial after the first update", uuid)
			}
			*sawInitial = true
		}
		if !nqos {
			if o, was := old[uuid]; was && o != "" && action == "new" {
				w.Takeovers = append(w.Takeovers, fmt.Sprintf("%s %s: owner %s -> not a NetworkQoS row", w.Table, uuid, o))
			}
			continue
		}
		c := w.ByOwner[owner]
		if c == nil {
			c = &Counts{}
			w.ByOwner[owner] = c
		}
		switch action {
		case "initial":
			c.Initial++
		case "insert":
			c.Insert++
			w.Changes = append(w.Changes, fmt.Sprintf("%s%s %s (%s) inserted", at(u), w.Table, uuid, ids[ownerControllerKey]))
		case "delete":
			c.Delete++
			w.Changes = append(w.Changes, fmt.Sprintf("%s%s %s (%s) deleted", at(u), w.Table, uuid, ids[ownerControllerKey]))
		case "new":
			c.Modify++
			w.Changes = append(w.Changes, fmt.Sprintf("%s%s %s (%s) modified: %s", at(u), w.Table, uuid, ids[ownerControllerKey], strings.Join(changed[uuid], ",")))
			if o, was := old[uuid]; was && o != owner {
				w.Takeovers = append(w.Takeovers, fmt.Sprintf("%s %s: owner %s -> %s", w.Table, uuid, o, owner))
			}
		default:
			return fmt.Errorf("row %s: action %q", uuid, action)
		}
	}
	return nil
}

// ovsdbMap decodes an OVSDB map ["map", [[k, v], ...]].
func ovsdbMap(raw json.RawMessage) (map[string]string, error) {
	var pair [2]json.RawMessage
	if err := json.Unmarshal(raw, &pair); err != nil {
		return nil, err
	}
	var tag string
	if err := json.Unmarshal(pair[0], &tag); err != nil || tag != "map" {
		return nil, fmt.Errorf("not an OVSDB map: %s", abbrev(string(raw)))
	}
	var kvs [][2]string
	if err := json.Unmarshal(pair[1], &kvs); err != nil {
		return nil, err
	}
	m := make(map[string]string, len(kvs))
	for _, kv := range kvs {
		m[kv[0]] = kv[1]
	}
	return m, nil
}

// Owners lists the table's owners in order.
func (w *TableWatch) Owners() []Owner {
	var out []Owner
	for o := range w.ByOwner {
		out = append(out, o)
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}

// at prefixes a change with the update's time, when the monitor gave one.
func at(u monitorUpdate) string {
	if u.Time == "" {
		return ""
	}
	return u.Time + " "
}

func abbrev(s string) string {
	if len(s) > 200 {
		return s[:200] + "..."
	}
	return s
}
