package localnetenv

import (
	"bytes"
	"context"
	"errors"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nqos/nqos/internal/seeded"
	"github.com/nqos/nqos/internal/testenv"
)

// TestSeededBugFailsSuite shows that a deliberately broken
// controller makes the suite fail with a message naming the broken
// property. nqos-sim is built with one seeded bug (internal/seeded) and
// runs one small scenario on the real testbed; it must exit non-zero and
// print the machine-readable line for the property the bug breaks. The
// same scenarios pass on the normal build (the scenario suite).
func TestSeededBugFailsSuite(t *testing.T) {
	testenv.Hermetic(t, "builds nqos-sim three times and boots three testbeds")
	requireTestbed(t)
	testenv.Binaries(t, "go")
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Fatal(err)
	}
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		bug      seeded.Bug
		scenario string
		want     string // the failure line naming the broken property
	}{
		// The source match is `ip4.src == {$set}`, not `inport == @pg`.
		{seeded.SourceByIP, "story4-uplink-dscp", "FAIL scenario story4-uplink-dscp: nb-rows"},
		// Priorities 10000+p*20+i instead of the worked example's 10600/10700/10701.
		{seeded.PriorityX20, "story2-backup", "FAIL scenario story2-backup: nb-rows"},
		// A pod whose LSP is missing is dropped and never retried: the
		// late VM's port never joins its port group (startVM, 30 s).
		{seeded.NoLateLSPRetry, "vm-after-policy", "FAIL scenario vm-after-policy: nb-rows"},
	} {
		t.Run(string(tc.bug), func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
			defer cancel()
			// nqos-controller beside nqos-sim, with the same bug: each
			// zone's controller (interconnect, the default) runs it.
			dir := t.TempDir()
			bin := filepath.Join(dir, "nqos-sim")
			for _, cmd := range []string{"nqos-sim", "nqos-controller"} {
				build := exec.CommandContext(ctx, gobin, "build", "-tags", tc.bug.Tag(), "-o", filepath.Join(dir, cmd), "./cmd/"+cmd)
				build.Dir = root
				if out, err := build.CombinedOutput(); err != nil {
					t.Fatalf("build %s -tags %s: %v\n%s", cmd, tc.bug.Tag(), err, out)
				}
			}
			var stdout, stderr bytes.Buffer
			run := exec.CommandContext(ctx, bin, "run", tc.scenario, "--report-dir", t.TempDir())
			run.Dir, run.Stdout, run.Stderr = root, &stdout, &stderr
			err := run.Run()
			var exit *exec.ExitError
			if !errors.As(err, &exit) || exit.ExitCode() == 0 {
				t.Fatalf("nqos-sim -tags %s run %s: %v, want a non-zero exit\nstdout:\n%s\nstderr:\n%s", tc.bug.Tag(), tc.scenario, err, &stdout, &stderr)
			}
			if !hasLine(stdout.String(), tc.want) {
				t.Errorf("nqos-sim -tags %s (%s) exited %d but stdout lacks the line %q:\n%s\nstderr:\n%s",
					tc.bug.Tag(), tc.bug.Description(), exit.ExitCode(), tc.want, &stdout, &stderr)
			}
		})
	}
}

func hasLine(out, line string) bool {
	for _, l := range strings.Split(out, "\n") {
		if strings.TrimSpace(l) == line {
			return true
		}
	}
	return false
}
