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
}

type watchEvent struct {
	Type   string `json:"type"`
	Object struct {
		Metadata struct {
			Namespace string `json:"namespace"`
			Name      string `json:"name"`
		} `json:"metadata"`
		Status struct {
			Status     string `json:"status"`
			Conditions []struct {
				Type   string `json:"type"`
				Status string `json:"status"`
				Reason string `json:"reason"`
			} `json:"conditions"`
		} `json:"status"`
	} `json:"object"`
}

// ParseStatusWatch reduces the output of `kubectl get networkqoses -A
// --watch --output-watch-events -o json` (a stream of JSON events).
func ParseStatusWatch(out string) (*StatusWatch, error) {
	s := &StatusWatch{Events: map[string]int{}, Conditions: map[string][]string{}, Status: map[string]string{}}
	dec := json.NewDecoder(strings.NewReader(out))
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
		switch ev.Type {
		case "ADDED":
			var cs []string
			for _, c := range ev.Object.Status.Conditions {
				cs = append(cs, fmt.Sprintf("%s=%s/%s", c.Type, c.Status, c.Reason))
			}
			sort.Strings(cs)
			s.Conditions[key] = cs
			s.Status[key] = ev.Object.Status.Status
		case "MODIFIED":
			s.Modified = append(s.Modified, key)
		}
	}
	return s, nil
}
