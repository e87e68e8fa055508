package localnetenv

import (
	"context"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/nqos/nqos/harness"
	"github.com/nqos/nqos/internal/qos"
	"github.com/nqos/nqos/reports"
)

// logTail is how much of each daemon log a failed scenario's report keeps.
const logTail = 16 << 10

// Rows returns the NetworkQoS-owned NB rows from the NB client's cache.
func (e *Env) Rows() qos.Desired { return e.nb.Rows() }

// Audit returns the NB client's invariant violations.
func (e *Env) Audit() []harness.Violation {
	var out []harness.Violation
	for _, v := range e.nb.Audit() {
		out = append(out, harness.Violation{Row: v.Row, Problem: v.Problem})
	}
	return out
}

// OVNVersion runs `ovn-nbctl --version`; its first line names the version.
func (e *Env) OVNVersion(ctx context.Context) (string, error) {
	out, err := e.tb.Exec(ctx, "", "ovn-nbctl", "--version")
	if err != nil {
		return "", err
	}
	first, _, _ := strings.Cut(out, "\n")
	return strings.TrimSpace(strings.TrimPrefix(first, "ovn-nbctl")), nil
}

// Logs collects the testbed's logs and dumps into <dir>/logs and returns
// the tail of each daemon log.
func (e *Env) Logs(ctx context.Context) []reports.Log {
	dir := filepath.Join(e.dir, "logs")
	if err := e.tb.Collect(ctx, dir); err != nil {
		return []reports.Log{{Name: "collect", Text: err.Error()}}
	}
	files, _ := filepath.Glob(filepath.Join(dir, "*"))
	sort.Strings(files)
	var out []reports.Log
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		if len(raw) > logTail {
			raw = raw[len(raw)-logTail:]
		}
		out = append(out, reports.Log{Name: filepath.Base(f), Text: string(raw)})
	}
	return out
}
