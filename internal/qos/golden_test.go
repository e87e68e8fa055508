package qos

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/nqos/nqos/internal/golden"
)

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
	golden.Cases(t, "testdata/*.yaml", ".golden.json", func(t *testing.T, file string) []byte {
		var buf bytes.Buffer
		if err := WriteJSON(&buf, compileFile(t, file)); err != nil {
			t.Fatal(err)
		}
		return buf.Bytes()
	})
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
