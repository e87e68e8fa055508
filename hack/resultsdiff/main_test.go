package main

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
)

func flat(t *testing.T, js string) map[string]string {
	t.Helper()
	var v any
	if err := json.Unmarshal([]byte(js), &v); err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	flatten("", v, out)
	return out
}

func TestCompare(t *testing.T) {
	a := flat(t, `{"started":"x","scenarios":[{"name":"s","status":"pass","steps":[{"index":0,"kind":"apply","status":"pass"}],
		"flows":[{"name":"f","family":"v4","packets":100,"verdicts":[{"check":"dscp","pass":true}]}]}]}`)
	b := flat(t, `{"started":"y","scenarios":[{"name":"s","status":"fail","steps":[{"index":0,"kind":"apply","status":"pass","verdicts":[]}],
		"flows":[{"name":"f","family":"v4","packets":101,"verdicts":[{"check":"dscp","pass":false,"got":1}]}],"failedProperties":["dscp"]}]}`)
	d := compare(a, b)
	wantOutcomes := []string{
		`.scenarios[s].failedProperties[dscp]: (absent) -> "dscp"`,
		`.scenarios[s].flows[f v4].verdicts[dscp].pass: true -> false`,
		`.scenarios[s].status: "pass" -> "fail"`,
	}
	if !slices.Equal(d.outcomes, wantOutcomes) {
		t.Errorf("outcomes %q, want %q", d.outcomes, wantOutcomes)
	}
	if !slices.Equal(d.onlyB, []string{".scenarios[s].failedProperties[dscp]", ".scenarios[s].flows[f v4].verdicts[dscp].got", ".scenarios[s].steps[0 apply].verdicts"}) || len(d.onlyA) != 0 {
		t.Errorf("only in a %q, only in b %q", d.onlyA, d.onlyB)
	}
	if len(d.values) != 1 || !strings.Contains(d.values[0], "packets: 100 -> 101") {
		t.Errorf("values %q", d.values)
	}
	if d := compare(a, a); len(d.outcomes)+len(d.onlyA)+len(d.onlyB)+len(d.values) != 0 {
		t.Errorf("a file against itself: %+v", d)
	}
}

func TestKeepOnly(t *testing.T) {
	m := flat(t, `{"ipFamily":"v4","scenarios":[{"name":"s","status":"pass"},{"name":"t","status":"fail"}]}`)
	got := keep(m, "t")
	if len(got) != 2 || got[".scenarios[t].status"] != `"fail"` || got[".scenarios[t].name"] != `"t"` {
		t.Errorf("keep t: %v", got)
	}
}
