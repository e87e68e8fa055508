package qos

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nqos/nqos/internal/golden"
)

var update = flag.Bool("update", false, "rewrite the golden files of internal/qos/testdata")

// compileFile decodes and compiles one manifest file.
func compileFile(t testing.TB, path string) Desired {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	in, err := DecodeManifests(f, path)
	if err != nil {
		t.Fatalf("decode: %v", err)
	}
	return Compile(in)
}

// TestGolden compiles every testdata/<case>.yaml and compares the JSON
// with testdata/<case>.golden.json (regenerate with -update).
func TestGolden(t *testing.T) {
	files, err := filepath.Glob("testdata/*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no golden cases: %v", err)
	}
	for _, file := range files {
		name := strings.TrimSuffix(filepath.Base(file), ".yaml")
		t.Run(name, func(t *testing.T) {
			var buf bytes.Buffer
			if err := WriteJSON(&buf, compileFile(t, file)); err != nil {
				t.Fatal(err)
			}
			got := buf.Bytes()
			goldenPath := strings.TrimSuffix(file, ".yaml") + ".golden.json"
			golden.Check(t, goldenPath, got, *update)
		})
	}
}

func openTestdata(t testing.TB, name string) *os.File {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}
