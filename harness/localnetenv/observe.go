package localnetenv

import (
	"context"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/nqos/nqos/harness"
	"github.com/nqos/nqos/harness/nbaudit"
	"github.com/nqos/nqos/harness/results"
	"github.com/nqos/nqos/internal/ovnnb"
	"github.com/nqos/nqos/internal/qos"
)

// logTail is how much of each daemon log a failed scenario's report keeps.
const logTail = 16 << 10

// Rows returns the NetworkQoS-owned NB rows from the NB client's cache;
// a failed read is an error.
func (e *Env) Rows(ctx context.Context) (qos.Desired, error) { return e.nb.Rows(ctx) }

// Watch starts an nbaudit.Watcher on its own NB monitor connection (so
// the controller's client and cache are not involved): it audits the
// state after every committed NB transaction.
// Objects in neverOwn must own no row in any audited state.
func (e *Env) Watch(ctx context.Context, neverOwn []harness.ObjectKey) (harness.Watch, error) {
	rejected := map[ovnnb.Key]bool{}
	for _, k := range neverOwn {
		rejected[ovnnb.Key{Namespace: k.Namespace, Name: k.Name}] = true
	}
	opts := nbaudit.Options{Rejected: func(k ovnnb.Key) bool { return rejected[k] }, Log: e.log}
	return &watch{w: nbaudit.Watch(context.WithoutCancel(ctx), e.tb.NBAddress(), opts)}, nil
}

// watch is a running nbaudit.Watcher.
type watch struct {
	w *nbaudit.Watcher
}

// Stop ends the watcher and returns its sightings.
func (w *watch) Stop() []harness.Sighting {
	ss := w.w.Stop()
	out := make([]harness.Sighting, len(ss))
	for i, s := range ss {
		out[i] = harness.Sighting{At: s.At, Row: s.Violation.Row, Problem: s.Violation.Problem}
	}
	return out
}

// Checks is how many NB states the watcher audited.
func (w *watch) Checks() int { return w.w.Checks() }

// OVNVersion runs `ovn-nbctl --version`; its first line names the version.
func (e *Env) OVNVersion(ctx context.Context) (string, error) {
	out, err := e.tb.CentralExec(ctx, "ovn-nbctl", "--version")
	if err != nil {
		return "", err
	}
	first, _, _ := strings.Cut(out, "\n")
	return strings.TrimSpace(strings.TrimPrefix(first, "ovn-nbctl")), nil
}

// Crashes lists the daemon crashes the testbed's logs record.
func (e *Env) Crashes(context.Context) ([]string, error) {
	cs, err := e.tb.Crashes()
	if err != nil {
		return nil, err
	}
	out := make([]string, len(cs))
	for i, c := range cs {
		out[i] = c.String()
	}
	return out, nil
}

// Logs collects the testbed's logs and dumps into <dir>/logs and returns
// the tail of each daemon log.
func (e *Env) Logs(ctx context.Context) []results.Log {
	dir := filepath.Join(e.dir, "logs")
	if err := e.tb.Collect(ctx, dir); err != nil {
		return []results.Log{{Name: "collect", Text: err.Error()}}
	}
	files, _ := filepath.Glob(filepath.Join(dir, "*"))
	sort.Strings(files)
	var out []results.Log
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		if len(raw) > logTail {
			raw = raw[len(raw)-logTail:]
		}
		out = append(out, results.Log{Name: filepath.Base(f), Text: string(raw)})
	}
	return append(out, e.controllerLog()...)
}
