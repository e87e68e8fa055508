package cni

import (
	"encoding/json"
	"fmt"
	"strconv"
)

// vsctlTable is `ovs-vsctl --format=json list` output.
type vsctlTable struct {
	Headings []string            `json:"headings"`
	Data     [][]json.RawMessage `json:"data"`
}

// decodeInterface reads the ofport and external_ids of the one row of
// `ovs-vsctl --format=json --columns=ofport,external_ids list Interface X`.
// An ofport not yet assigned is "[]" (an empty set).
func decodeInterface(out string) (string, map[string]string, error) {
	var t vsctlTable
	if err := json.Unmarshal([]byte(out), &t); err != nil {
		return "", nil, fmt.Errorf("decode ovs-vsctl JSON: %w", err)
	}
	if len(t.Data) != 1 || len(t.Headings) != 2 || len(t.Data[0]) != 2 || t.Headings[0] != "ofport" || t.Headings[1] != "external_ids" {
		return "", nil, fmt.Errorf("ovs-vsctl JSON: want one row of ofport, external_ids, got %s", out)
	}
	ofport := "[]"
	var n int
	if json.Unmarshal(t.Data[0][0], &n) == nil {
		ofport = strconv.Itoa(n)
	}
	ids, err := decodeMap(t.Data[0][1])
	if err != nil {
		return "", nil, err
	}
	return ofport, ids, nil
}

// decodeMap reads an OVSDB map of strings: ["map", [[k, v], ...]].
func decodeMap(raw json.RawMessage) (map[string]string, error) {
	var m [2]json.RawMessage
	var tag string
	if err := json.Unmarshal(raw, &m); err != nil || json.Unmarshal(m[0], &tag) != nil || tag != "map" {
		return nil, fmt.Errorf("ovs-vsctl JSON: %s is not a map", raw)
	}
	var pairs [][2]string
	if err := json.Unmarshal(m[1], &pairs); err != nil {
		return nil, fmt.Errorf("ovs-vsctl JSON map %s: %w", raw, err)
	}
	out := make(map[string]string, len(pairs))
	for _, p := range pairs {
		out[p[0]] = p[1]
	}
	return out, nil
}
