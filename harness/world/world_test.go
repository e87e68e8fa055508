package world

import (
	"bytes"
	"io/fs"
	"reflect"
	"strings"
	"testing"

	"github.com/nqos/nqos/internal/qos"
	"github.com/nqos/nqos/scenarios"
)

// TestTypedObjectsMatchTheManifestText: for every manifest revision of
// every builtin scenario, the typed objects the world hands the compiler
// are the ones DecodeManifests reads from the manifest's YAML text.
func TestTypedObjectsMatchTheManifestText(t *testing.T) {
	names, err := fs.Glob(scenarios.Builtin(), "*.yaml")
	if err != nil || len(names) == 0 {
		t.Fatalf("builtin scenarios: %v %v", names, err)
	}
	checked := 0
	for _, name := range names {
		sc, err := scenarios.Load(scenarios.Builtin(), name)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range sc.Manifests {
			if m.Ignored || m.Topological() || m.IsMigration() {
				continue
			}
			typed, err := qos.DecodeObjects(name, []map[string]any{m.Object})
			if err != nil {
				t.Errorf("%s: manifest %s revision %d: %v", name, m.ID, m.Revision, err)
				continue
			}
			text, err := qos.DecodeManifests(bytes.NewReader(m.YAML()), name)
			if err != nil {
				t.Fatalf("%s: manifest %s: %v", name, m.ID, err)
			}
			if !reflect.DeepEqual(typed, text) {
				t.Errorf("%s: manifest %s revision %d: typed %+v, from the text %+v", name, m.ID, m.Revision, typed, text)
			}
			checked++
		}
	}
	if checked < 20 {
		t.Errorf("only %d manifests checked", checked)
	}
}

// TestDecodeObjectsRejects: an unknown field, an unknown kind and a
// duplicate object are errors naming the object.
func TestDecodeObjectsRejects(t *testing.T) {
	ns := func(name string, extra map[string]any) map[string]any {
		meta := map[string]any{"name": name}
		for k, v := range extra {
			meta[k] = v
		}
		return map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": meta}
	}
	for want, objs := range map[string][]map[string]any{
		"unknown field":             {ns("a", map[string]any{"colour": "red"})},
		`unsupported "v1" "Secret"`: {{"apiVersion": "v1", "kind": "Secret", "metadata": map[string]any{"name": "s"}}},
		"duplicate Namespace /a":    {ns("a", nil), ns("a", nil)},
		"metadata.name: required":   {ns("", nil)},
	} {
		if _, err := qos.DecodeObjects("t.yaml", objs); err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "t.yaml") {
			t.Errorf("want %q, got %v", want, err)
		}
	}
}
