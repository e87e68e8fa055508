package coexist

import (
	"strings"
	"testing"
)

// quiet is a window in which both controllers' rows stood still.
func quiet() Window {
	return Window{
		Tables: []*TableWatch{
			{Table: "QoS", ByOwner: map[Owner]*Counts{OwnerOVNKube: {Initial: 1}, OwnerNQoS: {Initial: 1}}},
			{Table: "Port_Group", ByOwner: map[Owner]*Counts{OwnerNQoS: {Initial: 1}}},
			{Table: "Address_Set", ByOwner: map[Owner]*Counts{OwnerOVNKube: {Initial: 1}}},
		},
		Status: &StatusWatch{
			Events:     map[string]int{"ADDED": 2},
			Conditions: map[string][]string{"vms/a": {"Accepted=True/x", "Ready-In-Zone-global=True/y"}, "vms/b": {"Accepted=True/x"}},
			Writers: map[string]map[string][]string{
				"vms/a": {"Accepted": {"nqos-global"}, "Ready-In-Zone-global": {"global"}},
				"vms/b": {"Accepted": {"nqos-global"}, "NQOSReady-In-Zone-global": {"nqos-global"}},
			},
		},
	}
}

var expectAB = Expect{Objects: []string{"vms/a", "vms/b"}, Conditions: map[string][]string{"vms/a": {"Ready-In-Zone-global=True"}},
	Writers: map[string]string{"Ready-In-Zone-": "global", "NQOSReady-In-Zone-": "nqos-global", "Accepted": "nqos-global"}}

func TestJudgePassesAQuietWindow(t *testing.T) {
	if fails := Judge(quiet(), expectAB); len(fails) != 0 {
		t.Fatalf("quiet window failed: %q", fails)
	}
}

func TestJudgeFailsEveryFlipAndEveryAbsence(t *testing.T) {
	for name, tc := range map[string]struct {
		change func(*Window)
		want   string
	}{
		"nqos deletes an ovnkube row": {func(w *Window) { w.Tables[0].ByOwner[OwnerOVNKube].Delete = 1 }, "QoS: ovnkube rows inserted 0, modified 0, deleted 1"},
		"an nqos port group changed":  {func(w *Window) { w.Tables[1].ByOwner[OwnerNQoS].Modify = 1 }, "Port_Group: nqos rows inserted 0, modified 1"},
		"an address set re-created":   {func(w *Window) { w.Tables[2].ByOwner[OwnerOVNKube].Insert = 1 }, "Address_Set: ovnkube rows inserted 1"},
		"a takeover":                  {func(w *Window) { w.Tables[0].Takeovers = []string{"QoS u: owner ovnkube -> nqos"} }, "takeover: QoS u"},
		"no ovnkube QoS row":          {func(w *Window) { delete(w.Tables[0].ByOwner, OwnerOVNKube) }, "QoS: no ovnkube NetworkQoS row"},
		"no nqos port group":          {func(w *Window) { w.Tables[1].ByOwner[OwnerNQoS].Initial = 0 }, "Port_Group: no nqos NetworkQoS row"},
		"a row of neither":            {func(w *Window) { w.Tables[0].ByOwner[OwnerOther] = &Counts{Initial: 1} }, "of neither controller"},
		"a table not monitored":       {func(w *Window) { w.Tables = w.Tables[:2] }, "Address_Set: not monitored"},
		"a status change":             {func(w *Window) { w.Status.Events["MODIFIED"] = 1; w.Status.Modified = []string{"vms/a"} }, "1 objects modified or deleted"},
		"an object not listed":        {func(w *Window) { delete(w.Status.Conditions, "vms/b") }, "NetworkQoS vms/b: not listed"},
		"a condition missing":         {func(w *Window) { w.Status.Conditions["vms/a"] = []string{"Accepted=True/x"} }, "no condition Ready-In-Zone-global=True"},
		"nqos writes ovnkube's condition": {func(w *Window) { w.Status.Writers["vms/a"]["Ready-In-Zone-global"] = []string{"global", "nqos-global"} },
			"condition Ready-In-Zone-global owned by [global nqos-global], want global alone"},
		"ovnkube writes nqos's condition": {func(w *Window) { w.Status.Writers["vms/b"]["NQOSReady-In-Zone-global"] = []string{"global"} },
			"condition NQOSReady-In-Zone-global owned by [global], want nqos-global alone"},
		"status not watched": {func(w *Window) { w.Status = nil }, "not watched"},
	} {
		w := quiet()
		tc.change(&w)
		fails := Judge(w, expectAB)
		if !strings.Contains(strings.Join(fails, "\n"), tc.want) {
			t.Errorf("%s: failures %q, want one with %q", name, fails, tc.want)
		}
	}
}

func TestParseStatusWatch(t *testing.T) {
	out := `{"type":"ADDED","object":{"metadata":{"namespace":"vms","name":"a","managedFields":[
  {"manager":"global","fieldsV1":{"f:status":{"f:conditions":{"k:{\"type\":\"Ready-In-Zone-global\"}":{}}}}},
  {"manager":"nqos-global","fieldsV1":{"f:status":{"f:status":{},"f:conditions":{"k:{\"type\":\"Accepted\"}":{}}}}}]},"status":{"status":"ok","conditions":[{"type":"Ready-In-Zone-global","status":"True","reason":"r"},{"type":"Accepted","status":"True","reason":"c"}]}}}
{
  "type": "MODIFIED",
  "object": {"metadata": {"namespace": "vms", "name": "a"}, "status": {}}
}`
	s, err := ParseStatusWatch(out)
	if err != nil {
		t.Fatal(err)
	}
	if s.Events["ADDED"] != 1 || s.Events["MODIFIED"] != 1 || len(s.Modified) != 1 || s.Status["vms/a"] != "ok" {
		t.Errorf("watch %+v", s)
	}
	if got := strings.Join(s.Conditions["vms/a"], " "); got != "Accepted=True/c Ready-In-Zone-global=True/r" {
		t.Errorf("conditions %q", got)
	}
	if w := s.Writers["vms/a"]; strings.Join(w["Ready-In-Zone-global"], "+") != "global" ||
		strings.Join(w["Accepted"], "+") != "nqos-global" || strings.Join(w["status.status"], "+") != "nqos-global" {
		t.Errorf("writers %v", w)
	}
	for _, bad := range []string{`{"type":"ADDED"`, `{"object":{"metadata":{"name":"a"}}}`} {
		if _, err := ParseStatusWatch(bad); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}
