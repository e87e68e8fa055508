package verify

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/nqos/nqos/scenarios/manifests"
)

// readDir decodes every manifest file of dir, sorted by name.
func readDir(t testing.TB, dir string) []*manifests.Object {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var objs []*manifests.Object
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		o, err := manifests.ReadBytes(data, f)
		if err != nil {
			t.Fatal(err)
		}
		objs = append(objs, o...)
	}
	return objs
}

func TestBuildOKEP(t *testing.T) {
	p, err := Build(readDir(t, "../../examples/okep-localnet"), "examples/okep-localnet", Options{Families: []Family{V4, V6}, OVN: "23.03.1"})
	if err != nil {
		t.Fatal(err)
	}
	for _, pr := range p.Probes {
		t.Logf("%s %s %s %s/%d -> %v %v %v %s", pr.VM, pr.Family, pr.Dst, pr.Protocol, pr.Port, show(pr.Intent.DSCP), show(pr.Intent.MeterKbps), show(pr.Intent.Rule), pr.Overload)
	}
	t.Logf("shadowed %v", p.Shadowed)
}

func show[T any](p *T) any {
	if p == nil {
		return nil
	}
	return *p
}
