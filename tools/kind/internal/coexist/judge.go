package coexist

import (
	"fmt"
	"slices"
	"strings"
)

// Window is one coexistence window: the three tables' monitors and the
// NetworkQoS objects' watch.
type Window struct {
	Tables []*TableWatch
	Status *StatusWatch
}

// Expect names what both controllers must show in the window.
type Expect struct {
	// Objects are the NetworkQoS objects (ns/name) the watch must list.
	Objects []string
	// Conditions: per object, the conditions ("type=status" prefixes)
	// each controller must have written.
	Conditions map[string][]string
	// Writers: condition type prefix -> the one field manager that may
	// own conditions of that type on every object.
	Writers map[string]string
}

// table returns the watch of a table, or nil.
func (w Window) table(name string) *TableWatch {
	for _, t := range w.Tables {
		if t.Table == name {
			return t
		}
	}
	return nil
}

// Judge lists every failed check of the window (none: it passed). Each
// check is two-sided: both owners' rows present, and none of them
// inserted, changed or deleted; every object listed, and none modified.
func Judge(w Window, e Expect) []string {
	var fails []string
	need := map[string][]Owner{
		"QoS":         {OwnerOVNKube, OwnerNQoS},
		"Address_Set": {OwnerOVNKube},
		"Port_Group":  {OwnerNQoS},
	}
	for _, table := range []string{"QoS", "Port_Group", "Address_Set"} {
		t := w.table(table)
		if t == nil {
			fails = append(fails, fmt.Sprintf("%s: not monitored", table))
			continue
		}
		for _, o := range need[table] {
			if c := t.ByOwner[o]; c == nil || c.Initial == 0 {
				fails = append(fails, fmt.Sprintf("%s: no %s NetworkQoS row when the window opened", table, o))
			}
		}
		for _, o := range t.Owners() {
			c := t.ByOwner[o]
			if o == OwnerOther {
				fails = append(fails, fmt.Sprintf("%s: %d NetworkQoS rows of neither controller", table, c.Initial+c.Insert))
			}
			if c.Flips() != 0 {
				fails = append(fails, fmt.Sprintf("%s: %s rows inserted %d, modified %d, deleted %d in the window (want 0)",
					table, o, c.Insert, c.Modify, c.Delete))
			}
		}
		for _, to := range t.Takeovers {
			fails = append(fails, "takeover: "+to)
		}
	}
	s := w.Status
	if s == nil {
		return append(fails, "NetworkQoS status: not watched")
	}
	for _, obj := range e.Objects {
		cs, ok := s.Conditions[obj]
		if !ok {
			fails = append(fails, fmt.Sprintf("NetworkQoS %s: not listed by the watch", obj))
			continue
		}
		for _, want := range e.Conditions[obj] {
			if !slices.ContainsFunc(cs, func(c string) bool { return strings.HasPrefix(c, want) }) {
				fails = append(fails, fmt.Sprintf("NetworkQoS %s: no condition %s (has %v)", obj, want, cs))
			}
		}
	}
	fails = append(fails, judgeWriters(s, e)...)
	if n := s.Events["MODIFIED"] + s.Events["DELETED"]; n != 0 {
		fails = append(fails, fmt.Sprintf("NetworkQoS status: %d objects modified or deleted in the window (%v; want 0)", n, s.Modified))
	}
	return fails
}

// judgeWriters checks that every condition of a type with an expected
// writer is owned by that field manager alone.
func judgeWriters(s *StatusWatch, e Expect) []string {
	var fails []string
	for _, obj := range e.Objects {
		for typ, managers := range s.Writers[obj] {
			for prefix, want := range e.Writers {
				if strings.HasPrefix(typ, prefix) && (len(managers) != 1 || managers[0] != want) {
					fails = append(fails, fmt.Sprintf("NetworkQoS %s: condition %s owned by %v, want %s alone", obj, typ, managers, want))
				}
			}
		}
	}
	return fails
}

// Report prints the window's figures, one line each.
func Report(w Window) []string {
	var out []string
	for _, t := range w.Tables {
		for _, o := range t.Owners() {
			c := t.ByOwner[o]
			out = append(out, fmt.Sprintf("%-11s %-7s rows at open %d, inserted %d, modified %d, deleted %d, at close %d (flips %d)",
				t.Table, o, c.Initial, c.Insert, c.Modify, c.Delete, c.Final(), c.Flips()))
		}
		out = append(out, fmt.Sprintf("%-11s updates of any row in the window: %d, owner takeovers: %d", t.Table, t.Updates, len(t.Takeovers)))
		out = append(out, t.Changes...)
	}
	if s := w.Status; s != nil {
		for _, k := range sortedKeys(s.Conditions) {
			out = append(out, fmt.Sprintf("NetworkQoS %s: status %q, conditions %v", k, s.Status[k], s.Conditions[k]))
			var ws []string
			for f, m := range s.Writers[k] {
				ws = append(ws, fmt.Sprintf("%s by %s", f, strings.Join(m, "+")))
			}
			slices.Sort(ws)
			out = append(out, fmt.Sprintf("NetworkQoS %s: written %s", k, strings.Join(ws, ", ")))
		}
		out = append(out, fmt.Sprintf("NetworkQoS watch events: ADDED %d, MODIFIED %d, DELETED %d",
			s.Events["ADDED"], s.Events["MODIFIED"], s.Events["DELETED"]))
		for _, c := range s.Changes {
			out = append(out, "NetworkQoS modified: "+c)
		}
	}
	return out
}

func sortedKeys(m map[string][]string) []string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return ks
}
