package layers

import (
	"bufio"
	"maps"
	"os"
	"slices"
	"strings"
	"testing"
)

// goModVersions reads the effective version of every module a go.mod
// requires: its require lines, with replace lines that pin another
// version of the same module applied.
func goModVersions(t *testing.T, path string) map[string]string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatalf("read %s: %v", path, err)
	}
	defer f.Close()
	req, repl := map[string]string{}, map[string]string{}
	block := ""
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(strings.SplitN(sc.Text(), "//", 2)[0])
		switch {
		case line == ")":
			block = ""
			continue
		case strings.HasSuffix(line, "("):
			block = strings.TrimSpace(strings.TrimSuffix(line, "("))
			continue
		}
		fields := strings.Fields(line)
		kind := block
		if kind == "" && len(fields) > 0 {
			kind, fields = fields[0], fields[1:]
		}
		switch {
		case kind == "require" && len(fields) == 2:
			req[fields[0]] = fields[1]
		case kind == "replace" && len(fields) == 4 && fields[1] == "=>" && fields[0] == fields[2]:
			repl[fields[0]] = fields[3]
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatalf("read %s: %v", path, err)
	}
	for m, v := range repl {
		if _, ok := req[m]; ok {
			req[m] = v
		}
	}
	return req
}

// The kube binaries (tools/kube) and this module compile the same client
// libraries. Built at the same versions of every shared module, the
// packages they share compile once into one Go build cache entry: on a
// cold machine the kube build (hack/kube-bins.sh) then compiles most of
// what the tests need.
func TestKubeToolsShareModuleVersions(t *testing.T) {
	main := goModVersions(t, "../../go.mod")
	kube := goModVersions(t, "../../tools/kube/go.mod")
	if len(main) == 0 || len(kube) == 0 {
		t.Fatalf("go.mod requires: main %d, tools/kube %d: want both non-empty", len(main), len(kube))
	}
	shared := 0
	for _, m := range slices.Sorted(maps.Keys(main)) {
		v := main[m]
		kv, ok := kube[m]
		if !ok {
			continue
		}
		shared++
		if kv != v {
			t.Errorf("%s: go.mod %s, tools/kube/go.mod %s: align them (go get the newer one in the other module)", m, v, kv)
		}
	}
	if shared < 20 {
		t.Errorf("only %d modules shared by go.mod and tools/kube/go.mod: the parse is wrong", shared)
	}
}
