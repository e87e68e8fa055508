// Package golden owns the tests' golden files: it compares a test's
// output with a file (usually under testdata), rewrites the file when the
// test binary runs with the -update flag this package defines, and shows
// where two texts differ.
package golden

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// maxShown bounds the differing lines Diff shows.
const maxShown = 10

// update is the -update flag of every test binary that imports this
// package.
var update = flag.Bool("update", false, "rewrite the golden files (and the testdata a test records)")

// Update reports whether the test binary runs with -update: a test that
// records testdata of its own rewrites it then.
func Update() bool { return *update }

// Check compares got with the file at path and fails t, naming the file
// and the differing lines, when they differ. Under -update it first
// writes got there (creating the directory). A missing file fails t.
func Check(t testing.TB, path string, got []byte) {
	t.Helper()
	check(t, path, got, *update)
}

func check(t testing.TB, path string, got []byte, update bool) {
	t.Helper()
	if update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run the test with -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("output differs from %s (check, then run the test with -update):\n%s", path, Diff(string(want), string(got)))
	}
}

// Cases runs render, in a subtest named after the file, on every file
// matching pattern (there must be one) and checks its output with Check
// against the file named like the input with its extension replaced by
// ext (".golden", ".golden.json").
func Cases(t *testing.T, pattern, ext string, render func(t *testing.T, input string) []byte) {
	t.Helper()
	inputs, err := filepath.Glob(pattern)
	if err != nil || len(inputs) == 0 {
		t.Fatalf("no golden cases match %s: %v", pattern, err)
	}
	for _, in := range inputs {
		base := strings.TrimSuffix(in, filepath.Ext(in))
		t.Run(filepath.Base(base), func(t *testing.T) {
			Check(t, base+ext, render(t, in))
		})
	}
}

// Diff shows the first differing lines of two texts, each as its line
// number, the wanted line and the line got.
func Diff(want, got string) string {
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	var b strings.Builder
	shown := 0
	for i := 0; i < max(len(w), len(g)) && shown < maxShown; i++ {
		var wl, gl string
		if i < len(w) {
			wl = w[i]
		}
		if i < len(g) {
			gl = g[i]
		}
		if wl != gl {
			fmt.Fprintf(&b, "line %d:\n  want %s\n  got  %s\n", i+1, wl, gl)
			shown++
		}
	}
	return b.String()
}
