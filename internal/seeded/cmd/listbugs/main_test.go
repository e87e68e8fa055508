package main

import (
	"strings"
	"testing"

	"github.com/nqos/nqos/internal/seeded"
)

func TestRun(t *testing.T) {
	var b strings.Builder
	if err := run(&b, false); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
	all := seeded.All()
	if len(lines) != len(all) {
		t.Fatalf("%d lines, want %d:\n%s", len(lines), len(all), b.String())
	}
	for i, l := range lines {
		f := strings.Split(l, "\t")
		if len(f) != 3 || f[0] != string(all[i]) || f[1] != all[i].Tag() || f[2] == "" {
			t.Errorf("line %d %q, want %s\t%s\t<description>", i, l, all[i], all[i].Tag())
		}
	}
	b.Reset()
	if err := run(&b, true); err != nil || b.String() != string(seeded.Active)+"\n" {
		t.Errorf("-active printed %q (err %v), want %q", b.String(), err, seeded.Active)
	}
}
