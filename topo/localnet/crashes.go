package localnet

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// Crash is a daemon crash a testbed log records: the daemon's last words
// (an EMER line: a failed assertion, a fatal signal) or its monitor's
// restart line.
type Crash struct {
	// Log is the log file's name, e.g. "node1-ovn-controller.log".
	Log string
	// Line is the log line, as written.
	Line string
}

func (c Crash) String() string { return c.Log + ": " + c.Line }

// Crashes returns every crash the run's daemon logs record, in file and
// line order. A log that cannot be read is an error, never "no crash".
func (t *Testbed) Crashes() ([]Crash, error) {
	logs, err := t.daemonLogs()
	if err != nil {
		return nil, err
	}
	var out []Crash
	for _, l := range logs {
		raw, err := os.ReadFile(l)
		if err != nil {
			return nil, fmt.Errorf("testbed %s: crashes: %w", t.st.RunID, err)
		}
		if from := t.st.LogFrom[l]; from <= int64(len(raw)) {
			raw = raw[from:]
		}
		out = append(out, crashLines(t.logName(l), raw)...)
	}
	return out, nil
}

// crashLines picks the crash lines of one log: OVS/OVN daemons write
// "|EMER|" before they abort, a monitor writes "N crashes: pid P
// died, ..., restarting" when it restarts its daemon, and a Go program
// (ovnkube's stdout/stderr) starts its last words with "panic: " or
// "fatal error: ".
func crashLines(name string, raw []byte) []Crash {
	var out []Crash
	sc := bufio.NewScanner(bytes.NewReader(raw))
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if strings.Contains(line, "|EMER|") || (strings.Contains(line, "(monitor)|") && strings.Contains(line, " crashes: pid ")) ||
			strings.HasPrefix(line, "panic: ") || strings.HasPrefix(line, "fatal error: ") {
			out = append(out, Crash{Log: name, Line: line})
		}
	}
	return out
}

// daemonLogs are the run's daemon logs, sorted: its own and, on a KinD
// cluster, the OVS and OVN logs inside the nodes it uses and ovnkube's
// output in the control plane (where a Go panic lands).
func (t *Testbed) daemonLogs() ([]string, error) {
	patterns := append([]string{filepath.Join(t.dir, "logs", "*.log")}, t.cluster().logPatterns()...)
	var logs []string
	for _, p := range patterns {
		m, err := filepath.Glob(p)
		if err != nil {
			return nil, fmt.Errorf("testbed %s: daemon logs %s: %w", t.st.RunID, p, err)
		}
		logs = append(logs, m...)
	}
	sort.Strings(logs)
	return logs, nil
}

// logName names a daemon log in reports: its file name, prefixed by the
// KinD node for a log inside a node container.
func (t *Testbed) logName(path string) string { return t.cluster().logName(path) }

// markLogs records how long every daemon log of the KinD nodes is now:
// Crashes reads only what the run adds (the logs live as long as the
// cluster).
func (t *Testbed) markLogs() error {
	logs, err := t.daemonLogs()
	if err != nil {
		return err
	}
	t.st.LogFrom = map[string]int64{}
	for _, l := range logs {
		fi, err := os.Stat(l)
		if err != nil {
			return fmt.Errorf("testbed %s: daemon log: %w", t.st.RunID, err)
		}
		t.st.LogFrom[l] = fi.Size()
	}
	return t.st.save()
}
