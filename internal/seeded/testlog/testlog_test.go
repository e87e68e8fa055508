package testlog

import (
	"os"
	"strings"
	"testing"

	"github.com/nqos/nqos/internal/golden"
)

// render is the golden form of a Result: "fail\t<name>" then
// "build\t<pkg>" lines.
func render(r Result) string {
	var b strings.Builder
	for _, f := range r.Failed {
		b.WriteString("fail\t" + f + "\n")
	}
	for _, p := range r.BuildFailed {
		b.WriteString("build\t" + p + "\n")
	}
	return b.String()
}

// TestParseGolden parses real `go test -json` and `go test -v` output
// (captured from seeded-bug runs of this repo) and hand-written scenario
// runner output, and compares with testdata/<case>.golden.
func TestParseGolden(t *testing.T) {
	golden.Cases(t, "testdata/*.input", ".golden", func(t *testing.T, in string) []byte {
		f, err := os.Open(in)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		r, err := Parse(f)
		if err != nil {
			t.Fatal(err)
		}
		return []byte(render(r))
	})
}

func TestParseCases(t *testing.T) {
	cases := []struct {
		name, in    string
		failed      []string
		buildFailed []string
	}{
		{"empty", "", nil, nil},
		{"passing json", `{"Action":"pass","Package":"example.com/a","Test":"TestA"}` + "\n" + `{"Action":"pass","Package":"example.com/a"}`, nil, nil},
		{"parent pruned", "{\"Action\":\"fail\",\"Package\":\"x/p\",\"Test\":\"TestA/b\"}\n{\"Action\":\"fail\",\"Package\":\"x/p\",\"Test\":\"TestA\"}\n{\"Action\":\"fail\",\"Package\":\"x/p\",\"Test\":\"TestAB\"}",
			[]string{"p.TestA/b", "p.TestAB"}, nil},
		{"package only", `{"Action":"fail","Package":"x/p"}`, []string{"p (package)"}, nil},
		{"build fail event", `{"ImportPath":"x/q","Action":"build-fail"}` + "\n" + `{"Action":"fail","Package":"x/p","FailedBuild":"x/q"}`, nil, []string{"x/q"}},
		{"text pass is nothing", "ok  \tx/p\t0.1s\nPASS scenario a\n", nil, nil},
		{"scenario needs property", "FAIL scenario a\n", nil, nil},
		{"long line", "FAIL scenario big: " + strings.Repeat("x", 200000) + "\n", []string{"scenario big: " + strings.Repeat("x", 200000)}, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r, err := Parse(strings.NewReader(c.in))
			if err != nil {
				t.Fatal(err)
			}
			if strings.Join(r.Failed, "|") != strings.Join(c.failed, "|") {
				t.Errorf("failed %q, want %q", r.Failed, c.failed)
			}
			if strings.Join(r.BuildFailed, "|") != strings.Join(c.buildFailed, "|") {
				t.Errorf("build failed %q, want %q", r.BuildFailed, c.buildFailed)
			}
		})
	}
}
