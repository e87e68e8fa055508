package scenarios

import (
	"io/fs"
	"testing"
)

func TestBuiltinScenariosParse(t *testing.T) {
	names, err := fs.Glob(Builtin(), "*.yaml")
	if err != nil || len(names) == 0 {
		t.Fatalf("no builtin scenarios: %v", err)
	}
	seen := map[string]string{}
	for _, name := range names {
		sc, err := Load(Builtin(), name)
		if err != nil {
			t.Errorf("%v", err)
			continue
		}
		if prev, ok := seen[sc.Name]; ok {
			t.Errorf("%s: scenario name %q already used by %s", name, sc.Name, prev)
		}
		seen[sc.Name] = name
	}
}
