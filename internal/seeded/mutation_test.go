package seeded

import (
	"github.com/nqos/nqos/internal/testenv"

	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// runMutation runs hack/mutation.sh with extra environment and returns
// its stdout, stderr and exit status.
func runMutation(t *testing.T, env ...string) (stdout, stderr string, code int) {
	t.Helper()
	if os.Getenv("NQOS_MUTATION_RUN") != "" {
		t.Skip("inside a mutation run: not running hack/mutation.sh recursively")
	}
	testenv.Binaries(t, "bash")
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Fatal(err)
	}
	goTool(t)
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bash, filepath.Join(root, "hack", "mutation.sh"))
	cmd.Dir = root
	cmd.Env = append(os.Environ(), append(env, "MUTATION_OUT="+t.TempDir())...)
	var out, errOut strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err = cmd.Run()
	var exit *exec.ExitError
	switch {
	case errors.As(err, &exit):
		code = exit.ExitCode()
	case err != nil:
		t.Fatalf("run mutation.sh: %v", err)
	}
	return out.String(), errOut.String(), code
}

// tableRows parses the "bug | caught | by" rows of the script's table.
func tableRows(out string) map[string][2]string {
	rows := map[string][2]string{}
	re := regexp.MustCompile(`^(\S+)\s+\| (.+?)\s+\| (.*)$`)
	for _, l := range strings.Split(out, "\n") {
		if m := re.FindStringSubmatch(l); m != nil && m[1] != "bug" {
			rows[m[1]] = [2]string{m[2], m[3]}
		}
	}
	return rows
}

const (
	probeJSON = "go test -count=1 -json -tags=$TAG ./internal/seeded/testdata/probe"
	probeText = "go run -tags=$TAG ./internal/seeded/testdata/scenprobe"
)

// TestMutationScript drives hack/mutation.sh against the probe fixtures,
// whose test fails for every compiled-in bug but $PROBE_SPARE.
func TestMutationScript(t *testing.T) {
	cases := []struct {
		name string
		env  []string
		code int
		rows map[string][2]string // nil: no table expected
		errs string               // in stderr
	}{
		{"all caught, go test -json", []string{"MUTATION_CMD=" + probeJSON}, 0, allRows("yes", "probe.TestProbe"), "all 8 seeded bugs caught"},
		{"one spared, scenario lines", []string{"MUTATION_CMD=" + probeText, "PROBE_SPARE=burst", "MUTATION_BUGS=burst prio20"}, 1,
			map[string][2]string{"burst": {"no", "-"}, "prio20": {"yes", "scenario probe-prio20: bug compiled in"}}, "1 of 2 seeded bugs not caught"},
		{"baseline fails", []string{"MUTATION_CMD=go test -count=1 -json -tags=$TAG,nqos_bug_dscp1 ./internal/seeded/testdata/probe"}, 2, nil, "baseline (no bug tag) failed"},
		{"bug does not build", []string{"MUTATION_CMD=go test -count=1 -json -tags=$TAG${TAG:+,nqos_bug_dscp1} ./internal/seeded/testdata/probe", "MUTATION_BUGS=except"}, 1,
			map[string][2]string{"except": {"BUILD FAILED", "github.com/nqos/nqos/internal/seeded"}}, "1 of 1 seeded bugs not caught"},
		{"unknown bug", []string{"MUTATION_CMD=" + probeJSON, "MUTATION_BUGS=prio30"}, 3, nil, "unknown bug id 'prio30'"},
		{"unknown suite", []string{"MUTATION_SUITE=e2e"}, 3, nil, "MUTATION_SUITE='e2e': want scenarios, unit or all"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out, errOut, code := runMutation(t, c.env...)
			if code != c.code || !strings.Contains(errOut+out, c.errs) {
				t.Fatalf("exit %d, want %d; want %q in output\nstdout:\n%s\nstderr:\n%s", code, c.code, c.errs, out, errOut)
			}
			got := tableRows(out)
			if len(got) != len(c.rows) {
				t.Fatalf("table rows %v, want %v\n%s", got, c.rows, out)
			}
			for bug, want := range c.rows {
				if got[bug] != want {
					t.Errorf("row %s: %q, want %q", bug, got[bug], want)
				}
			}
		})
	}
}

func allRows(caught, by string) map[string][2]string {
	rows := map[string][2]string{}
	for _, b := range All() {
		rows[string(b)] = [2]string{caught, by}
	}
	return rows
}
