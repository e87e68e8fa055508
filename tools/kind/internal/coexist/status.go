package coexist

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"
)

// StatusWatch is the NetworkQoS objects' watch, reduced: the events per
// type and, per object, its conditions as the window opened
// (type=status/reason) and its status.status.
type StatusWatch struct {
	Events     map[string]int      // ADDED, MODIFIED, DELETED
	Modified   []string            // ns/name of each MODIFIED event, in order
	Conditions map[string][]string // ns/name -> "type=status/reason", sorted
	Status     map[string]string   // ns/name -> status.status
	// Writers: ns/name -> condition type (or "status.status") -> the
	// field managers that own it, from managedFields, sorted.
	Writers map[string]map[string][]string
	// Changes describe each MODIFIED event: the conditions that differ
	// from the object's previous state (type: old -> new) and the field
	// managers whose managedFields time moved.
	Changes []string
}

type watchEvent struct {
	Type   string `json:"type"`
	Object struct {
		Metadata struct {
			Namespace     string `json:"namespace"`
			Name          string `json:"name"`
			ManagedFields []struct {
				Manager  string         `json:"manager"`
				Time     string         `json:"time"`
				FieldsV1 map[string]any `json:"fieldsV1"`
			} `json:"managedFields"`
		} `json:"metadata"`
		Status struct {
			Status     string `json:"status"`
			Conditions []struct {
				Type               string `json:"type"`
				Status             string `json:"status"`
				Reason             string `json:"reason"`
				LastTransitionTime string `json:"lastTransitionTime"`
				ObservedGeneration int64  `json:"observedGeneration"`
			} `json:"conditions"`
		} `json:"status"`
	} `json:"object"`
}

// ParseStatusWatch reduces the output of `kubectl get networkqoses -A
// --watch --output-watch-events -o json` (a stream of JSON events).
func ParseStatusWatch(out string) (*StatusWatch, error) {
	s := &StatusWatch{Events: map[string]int{}, Conditions: map[string][]string{}, Status: map[string]string{},
		Writers: map[string]map[string][]string{}}
	dec := json.NewDecoder(strings.NewReader(out))
	prev := map[string]snapshot{}
	for {
		var ev watchEvent
		err := dec.Decode(&ev)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("NetworkQoS watch: %w", err)
		}
		key := ev.Object.Metadata.Namespace + "/" + ev.Object.Metadata.Name
		if ev.Type == "" || key == "/" {
			return nil, fmt.Errorf("NetworkQoS watch: event without type or object name")
		}
		s.Events[ev.Type]++
		now := snap(ev)
		if ev.Type == "MODIFIED" {
			s.Changes = append(s.Changes, key+": "+diff(prev[key], now))
		}
		prev[key] = now
		switch ev.Type {
		case "ADDED":
			var cs []string
			for _, c := range ev.Object.Status.Conditions {
				cs = append(cs, fmt.Sprintf("%s=%s/%s", c.Type, c.Status, c.Reason))
			}
			sort.Strings(cs)
			s.Conditions[key] = cs
			s.Status[key] = ev.Object.Status.Status
			w := map[string][]string{}
			for _, mf := range ev.Object.Metadata.ManagedFields {
				for _, f := range statusFields(mf.FieldsV1) {
					w[f] = append(w[f], mf.Manager)
				}
			}
			for f := range w {
				sort.Strings(w[f])
			}
			s.Writers[key] = w
		case "MODIFIED":
			s.Modified = append(s.Modified, key)
		}
	}
	return s, nil
}

// statusFields lists what of the status a managedFields entry owns: each
// condition by its type, and "status.status".
func statusFields(fields map[string]any) []string {
	st, _ := fields["f:status"].(map[string]any)
	var out []string
	if _, ok := st["f:status"]; ok {
		out = append(out, "status.status")
	}
	conds, _ := st["f:conditions"].(map[string]any)
	for k := range conds {
		var key struct {
			Type string `json:"type"`
		}
		if rest, ok := strings.CutPrefix(k, "k:"); ok && json.Unmarshal([]byte(rest), &key) == nil && key.Type != "" {
			out = append(out, key.Type)
		}
	}
	return out
}

// snapshot is what the watch compares between two events of an object.
type snapshot struct {
	conds    map[string]string // type -> status/reason/lastTransitionTime/observedGeneration
	managers map[string]string // manager -> time
}

func snap(ev watchEvent) snapshot {
	s := snapshot{conds: map[string]string{}, managers: map[string]string{}}
	for _, c := range ev.Object.Status.Conditions {
		s.conds[c.Type] = fmt.Sprintf("%s/%s@%s(gen %d)", c.Status, c.Reason, c.LastTransitionTime, c.ObservedGeneration)
	}
	for _, m := range ev.Object.Metadata.ManagedFields {
		s.managers[m.Manager] = m.Time
	}
	return s
}

// diff describes how now differs from before.
func diff(before, now snapshot) string {
	var out []string
	for _, t := range sortedUnion(before.conds, now.conds) {
		if before.conds[t] != now.conds[t] {
			out = append(out, fmt.Sprintf("%s %q -> %q", t, before.conds[t], now.conds[t]))
		}
	}
	for _, m := range sortedUnion(before.managers, now.managers) {
		if before.managers[m] != now.managers[m] {
			out = append(out, fmt.Sprintf("manager %s at %q -> %q", m, before.managers[m], now.managers[m]))
		}
	}
	if len(out) == 0 {
		return "no condition or manager changed"
	}
	return strings.Join(out, "; ")
}

func sortedUnion(a, b map[string]string) []string {
	var ks []string
	for k := range a {
		ks = append(ks, k)
	}
	for k := range b {
		if _, ok := a[k]; !ok {
			ks = append(ks, k)
		}
	}
	sort.Strings(ks)
	return ks
}
