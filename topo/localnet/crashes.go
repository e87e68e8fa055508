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
	logs, err := filepath.Glob(filepath.Join(t.dir, "logs", "*.log"))
	if err != nil {
		return nil, fmt.Errorf("testbed %s: daemon logs: %w", t.st.RunID, err)
	}
	sort.Strings(logs)
	var out []Crash
	for _, l := range logs {
		raw, err := os.ReadFile(l)
		if err != nil {
			return nil, fmt.Errorf("testbed %s: crashes: %w", t.st.RunID, err)
		}
		out = append(out, crashLines(filepath.Base(l), raw)...)
	}
	return out, nil
}

// crashLines picks the crash lines of one log: OVS/OVN daemons write
// "|EMER|" before they abort, and a monitor writes "N crashes: pid P
// died, ..., restarting" when it restarts its daemon.
func crashLines(name string, raw []byte) []Crash {
	var out []Crash
	sc := bufio.NewScanner(bytes.NewReader(raw))
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if strings.Contains(line, "|EMER|") || (strings.Contains(line, "(monitor)|") && strings.Contains(line, " crashes: pid ")) {
			out = append(out, Crash{Log: name, Line: line})
		}
	}
	return out
}
