package ovsdbmon

import (
	"encoding/json"
	"fmt"
	"sort"
)

// Decoders of OVSDB JSON values (RFC 7047 5.1), as they appear in
// notifications and in ovsdb-client / ovn-nbctl --format=json output.
// Every one fails on a malformed value, naming it.

// String decodes a string atom.
func String(raw json.RawMessage) (string, error) {
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return "", fmt.Errorf("not a string atom: %s", raw)
	}
	return s, nil
}

// Int decodes an integer atom.
func Int(raw json.RawMessage) (int, error) {
	var n int
	if err := json.Unmarshal(raw, &n); err != nil {
		return 0, fmt.Errorf("not an integer atom: %s", raw)
	}
	return n, nil
}

// UUID decodes ["uuid", "<uuid>"].
func UUID(raw json.RawMessage) (string, error) {
	var pair [2]string
	if err := json.Unmarshal(raw, &pair); err != nil || pair[0] != "uuid" {
		return "", fmt.Errorf("not a uuid atom: %s", raw)
	}
	return pair[1], nil
}

// Set splits a set: ["set", [...]] or one bare atom (a one-member set).
func Set(raw json.RawMessage) ([]json.RawMessage, error) {
	var tagged []json.RawMessage
	if err := json.Unmarshal(raw, &tagged); err == nil && len(tagged) == 2 {
		var tag string
		if json.Unmarshal(tagged[0], &tag) == nil && tag == "set" {
			var elems []json.RawMessage
			if err := json.Unmarshal(tagged[1], &elems); err != nil {
				return nil, fmt.Errorf("set body %s: %w", raw, err)
			}
			return elems, nil
		}
	}
	if len(raw) == 0 {
		return nil, fmt.Errorf("empty value where a set was expected")
	}
	return []json.RawMessage{raw}, nil
}

// UUIDSet decodes a set of uuids, sorted.
func UUIDSet(raw json.RawMessage) ([]string, error) {
	return setOf(raw, UUID)
}

// StringSet decodes a set of strings, sorted.
func StringSet(raw json.RawMessage) ([]string, error) {
	return setOf(raw, String)
}

func setOf(raw json.RawMessage, atom func(json.RawMessage) (string, error)) ([]string, error) {
	elems, err := Set(raw)
	if err != nil {
		return nil, err
	}
	out := make([]string, len(elems))
	for i, e := range elems {
		if out[i], err = atom(e); err != nil {
			return nil, err
		}
	}
	sort.Strings(out)
	return out, nil
}

// mapPairs decodes ["map", [[k, v], ...]].
func mapPairs(raw json.RawMessage) ([][2]json.RawMessage, error) {
	var tagged []json.RawMessage
	var tag string
	if err := json.Unmarshal(raw, &tagged); err != nil || len(tagged) != 2 ||
		json.Unmarshal(tagged[0], &tag) != nil || tag != "map" {
		return nil, fmt.Errorf("not a map: %s", raw)
	}
	var pairs [][2]json.RawMessage
	if err := json.Unmarshal(tagged[1], &pairs); err != nil {
		return nil, fmt.Errorf("map body %s: %w", raw, err)
	}
	return pairs, nil
}

// StringMap decodes a map of strings to strings.
func StringMap(raw json.RawMessage) (map[string]string, error) {
	return mapOf(raw, String)
}

// IntMap decodes a map of strings to integers.
func IntMap(raw json.RawMessage) (map[string]int, error) {
	return mapOf(raw, Int)
}

func mapOf[V any](raw json.RawMessage, value func(json.RawMessage) (V, error)) (map[string]V, error) {
	pairs, err := mapPairs(raw)
	if err != nil {
		return nil, err
	}
	out := make(map[string]V, len(pairs))
	for _, p := range pairs {
		k, err := String(p[0])
		if err != nil {
			return nil, fmt.Errorf("map key: %w", err)
		}
		v, err := value(p[1])
		if err != nil {
			return nil, fmt.Errorf("map value of %q: %w", k, err)
		}
		out[k] = v
	}
	return out, nil
}

// Row is one row image: column name -> value.
type Row map[string]json.RawMessage

// Column returns the value of col, failing when it is absent.
func (r Row) Column(col string) (json.RawMessage, error) {
	raw, ok := r[col]
	if !ok {
		return nil, fmt.Errorf("column %s missing", col)
	}
	return raw, nil
}

// Decode decodes column col of r with dec, naming the column on failure.
func Decode[T any](r Row, col string, dec func(json.RawMessage) (T, error), dst *T) error {
	raw, err := r.Column(col)
	if err != nil {
		return err
	}
	v, err := dec(raw)
	if err != nil {
		return fmt.Errorf("column %s: %w", col, err)
	}
	*dst = v
	return nil
}
