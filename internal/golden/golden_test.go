package golden

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// recorder is a testing.TB that records failures instead of stopping.
type recorder struct {
	testing.TB
	failed []string
}

func (r *recorder) Helper()                           {}
func (r *recorder) Errorf(format string, args ...any) { r.failed = append(r.failed, format) }
func (r *recorder) Fatalf(format string, args ...any) { r.failed = append(r.failed, format) }
func (r *recorder) Fatal(args ...any)                 { r.failed = append(r.failed, "fatal") }

// TestCheck: equal passes, different and missing fail, update writes
// the file (and its directory) so that the same output then passes.
func TestCheck(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sub", "out.golden")
	for _, tc := range []struct {
		name   string
		got    string
		update bool
		fails  bool
	}{
		{"missing", "a\n", false, true},
		{"update creates", "a\n", true, false},
		{"equal", "a\n", false, false},
		{"different", "b\n", false, true},
		{"update rewrites", "b\n", true, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := &recorder{TB: t}
			check(r, path, []byte(tc.got), tc.update)
			if (len(r.failed) > 0) != tc.fails {
				t.Errorf("failures %q, want failing %v", r.failed, tc.fails)
			}
		})
	}
	if b, err := os.ReadFile(path); err != nil || string(b) != "b\n" {
		t.Errorf("file = %q, %v; want the last update", b, err)
	}
}

// TestDiff names each differing line with both sides, at most maxShown.
func TestDiff(t *testing.T) {
	if d := Diff("a\nb\nc", "a\nx\nc\nd"); d != "line 2:\n  want b\n  got  x\nline 4:\n  want \n  got  d\n" {
		t.Errorf("Diff = %q", d)
	}
	if d := Diff("same", "same"); d != "" {
		t.Errorf("Diff of equal texts = %q", d)
	}
	many := strings.Repeat("x\n", 20)
	if n := strings.Count(Diff(many, strings.Repeat("y\n", 20)), "line "); n != maxShown {
		t.Errorf("Diff showed %d lines, want %d", n, maxShown)
	}
}
