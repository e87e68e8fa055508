package ovsdbmon_test

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/nqos/nqos/internal/ovsdbmon"
)

func TestDecoders(t *testing.T) {
	raw := func(s string) json.RawMessage { return json.RawMessage(s) }
	if got, err := ovsdbmon.UUIDSet(raw(`["set",[["uuid","b"],["uuid","a"]]]`)); err != nil || !reflect.DeepEqual(got, []string{"a", "b"}) {
		t.Errorf("UUIDSet set = %v, %v", got, err)
	}
	if got, err := ovsdbmon.UUIDSet(raw(`["uuid","a"]`)); err != nil || !reflect.DeepEqual(got, []string{"a"}) {
		t.Errorf("UUIDSet atom = %v, %v", got, err)
	}
	if got, err := ovsdbmon.StringSet(raw(`["set",[]]`)); err != nil || len(got) != 0 {
		t.Errorf("StringSet empty = %v, %v", got, err)
	}
	if got, err := ovsdbmon.StringMap(raw(`["map",[["k","v"]]]`)); err != nil || !reflect.DeepEqual(got, map[string]string{"k": "v"}) {
		t.Errorf("StringMap = %v, %v", got, err)
	}
	if got, err := ovsdbmon.IntMap(raw(`["map",[["dscp",46]]]`)); err != nil || !reflect.DeepEqual(got, map[string]int{"dscp": 46}) {
		t.Errorf("IntMap = %v, %v", got, err)
	}
	for _, bad := range []struct {
		name string
		err  error
	}{
		{"UUID of a string", second(ovsdbmon.UUID(raw(`"x"`)))},
		{"StringMap of a set", second(ovsdbmon.StringMap(raw(`["set",[]]`)))},
		{"IntMap with a string value", second(ovsdbmon.IntMap(raw(`["map",[["k","v"]]]`)))},
		{"String of a number", second(ovsdbmon.String(raw(`1`)))},
		{"missing column", ovsdbmon.Decode(ovsdbmon.Row{}, "name", ovsdbmon.String, new(string))},
	} {
		if bad.err == nil {
			t.Errorf("%s: no error", bad.name)
		}
	}
}

func second[T any](_ T, err error) error { return err }
