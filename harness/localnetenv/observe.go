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
)

// logTail is how much of each daemon log a failed scenario's report keeps.
const logTail = 16 << 10

// Watch starts one nbaudit.Watcher per zone, each on its own NB monitor
// connection (so the controllers' clients and caches are not involved):
// each audits its zone's state after every committed transaction there.
// Objects in neverOwn must own no row in any audited state.
func (e *testbedEnv) Watch(ctx context.Context, neverOwn []harness.ObjectKey) (harness.Watch, error) {
	rejected := map[harness.ObjectKey]bool{}
	for _, k := range neverOwn {
		rejected[k] = true
	}
	return e.WatchRejected(ctx, func(k harness.ObjectKey) bool { return rejected[k] })
}

// WatchRejected is Watch with a rejected set asked for every audited
// state.
func (e *testbedEnv) WatchRejected(ctx context.Context, rejected func(harness.ObjectKey) bool) (harness.Watch, error) {
	opts := nbaudit.Options{Log: e.log, Rejected: func(k ovnnb.Key) bool {
		return rejected(harness.ObjectKey{Namespace: k.Namespace, Name: k.Name})
	}}
	w := &watch{}
	for _, z := range e.zones {
		w.zones = append(w.zones, z.zone.Name)
		w.ws = append(w.ws, nbaudit.Watch(context.WithoutCancel(ctx), z.zone.NB, opts))
	}
	return w, nil
}

// watch is a running nbaudit.Watcher per zone.
type watch struct {
	zones []string
	ws    []*nbaudit.Watcher
}

// Stop ends the watchers and returns their sightings in the order they
// were first seen, each row named with its zone when there are several.
func (w *watch) Stop() []harness.Sighting {
	var out []harness.Sighting
	for i, zw := range w.ws {
		for _, s := range zw.Stop() {
			row := s.Violation.Row
			if len(w.ws) > 1 {
				row = "zone " + w.zones[i] + ": " + row
			}
			out = append(out, harness.Sighting{At: s.At, Row: row, Problem: s.Violation.Problem})
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].At.Before(out[j].At) })
	return out
}

// Checks is how many NB states the watchers audited, every zone together.
func (w *watch) Checks() int {
	n := 0
	for _, zw := range w.ws {
		n += zw.Checks()
	}
	return n
}

// OVNVersion runs `ovn-nbctl --version`; its first line names the version.
func (e *testbedEnv) OVNVersion(ctx context.Context) (string, error) {
	out, err := e.tb.CentralExec(ctx, "ovn-nbctl", "--version")
	if err != nil {
		return "", err
	}
	first, _, _ := strings.Cut(out, "\n")
	return strings.TrimSpace(strings.TrimPrefix(first, "ovn-nbctl")), nil
}

// Crashes lists the daemon crashes the testbed's logs record.
func (e *testbedEnv) Crashes(context.Context) ([]string, error) {
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
func (e *testbedEnv) Logs(ctx context.Context) []results.Log {
	dir := filepath.Join(e.dir, "logs")
	if err := e.tb.Collect(ctx, dir); err != nil {
		return []results.Log{{Name: "collect", Text: err.Error()}}
	}
	files, _ := filepath.Glob(filepath.Join(dir, "*"))
	sort.Strings(files)
	out := tailLogs(files)
	if e.plane != nil {
		out = append(out, e.plane.logs()...)
	}
	return out
}

// tailLogs is the last logTail bytes of each readable file, named by its
// base name.
func tailLogs(files []string) []results.Log {
	var out []results.Log
	for _, f := range files {
		if l, ok := tailLog(f, filepath.Base(f)); ok {
			out = append(out, l)
		}
	}
	return out
}

// tailLog is the last logTail bytes of a file as the log name (false if
// the file cannot be read).
func tailLog(path, name string) (results.Log, bool) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return results.Log{}, false
	}
	if len(raw) > logTail {
		raw = raw[len(raw)-logTail:]
	}
	return results.Log{Name: name, Text: string(raw)}, true
}
