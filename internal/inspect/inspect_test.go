package inspect

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

func run(t *testing.T, cmd func(context.Context, []string, Env) error, args ...string) (string, error) {
	t.Helper()
	var out, errOut bytes.Buffer
	err := cmd(context.Background(), args, Env{Stdout: &out, Stderr: &errOut, OVN: "23.03"})
	return out.String(), err
}

func exitCode(err error) int {
	var ee *ExitError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &ee):
		return ee.Code
	}
	return 1
}

// TestExplainJSONContract: verify's contract without trace and wire.
func TestExplainJSONContract(t *testing.T) {
	out, err := run(t, Explain, "-f", "../../examples/okep-localnet", "-o", "json")
	if err != nil {
		t.Fatal(err)
	}
	var rep struct {
		OVNVersion string           `json:"ovnVersion"`
		Shadowed   []map[string]any `json:"shadowed"`
		Probes     []map[string]any `json:"probes"`
		Summary    map[string]int   `json:"summary"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatal(err)
	}
	if rep.OVNVersion != "23.03" || len(rep.Probes) != 13 || rep.Summary["probes"] != 13 || len(rep.Shadowed) != 1 {
		t.Fatalf("report %+v", rep)
	}
	for _, p := range rep.Probes {
		for _, k := range []string{"vm", "family", "dst", "protocol", "port", "intent"} {
			if _, ok := p[k]; !ok {
				t.Errorf("probe %v: no %q", p, k)
			}
		}
		if _, ok := p["trace"]; ok {
			t.Errorf("probe %v has a trace leg", p)
		}
	}
}

func TestExplainInvalid(t *testing.T) {
	for _, args := range [][]string{{}, {"-f", "does-not-exist"}, {"-f", "../../examples/okep-localnet", "--ovn", "x"}, {"-f", "../../examples/okep-localnet", "-o", "xml"}} {
		if _, err := run(t, Explain, args...); exitCode(err) != ExitInvalid {
			t.Errorf("explain %q: %v, want exit 2", args, err)
		}
	}
}

// TestDiffExitCodes: the same set is exit 0, the two examples exit 1
// naming the newly shadowed backup rule, a missing side exit 2.
func TestDiffExitCodes(t *testing.T) {
	okep, backup := "../../examples/okep-localnet", "../../examples/backup-below-catchall"
	out, err := run(t, Diff, "--from", okep, "--to", okep)
	if err != nil || !strings.Contains(out, "nothing changes") {
		t.Fatalf("same set: %v\n%s", err, out)
	}
	out, err = run(t, Diff, "--from", okep, "--to", backup, "--ip-family", "v4")
	if exitCode(err) != ExitChanged || !strings.Contains(out, "newly shadowed: vms/pay-1: vms/backup-deprioritization#1 shadowed by vms/tier-production#0") ||
		!strings.Contains(out, "8, 100000 kbps, vms/backup-deprioritization#1") {
		t.Fatalf("examples: %v\n%s", err, out)
	}
	if _, err := run(t, Diff, "--from", okep); exitCode(err) != ExitInvalid {
		t.Fatalf("no --to: %v", err)
	}
}
