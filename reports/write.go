package reports

import (
	"bytes"
	"fmt"
	"github.com/nqos/nqos/harness/results"
	"io"
	"os"
	"path/filepath"
	"time"
)

// File names written into a report directory.
const (
	HTMLFile  = "report.html"
	JSONFile  = "results.json"
	JUnitFile = "junit.xml"
)

// Write renders the run into dir (report.html, results.json, junit.xml)
// and returns the HTML report's path. Files are written whole or not at
// all (temporary file and rename).
func Write(dir string, run *results.Run) (string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("report dir %s: %w", dir, err)
	}
	for _, out := range []struct {
		name  string
		write func(io.Writer, *results.Run) error
	}{{JSONFile, WriteJSON}, {JUnitFile, WriteJUnit}, {HTMLFile, WriteHTML}} {
		var buf bytes.Buffer
		if err := out.write(&buf, run); err != nil {
			return "", err
		}
		if err := writeAtomic(filepath.Join(dir, out.name), buf.Bytes()); err != nil {
			return "", err
		}
	}
	return filepath.Join(dir, HTMLFile), nil
}

func writeAtomic(path string, data []byte) error {
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, data, 0o644); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

// OutDir is the default output directory of a run started at t:
// <base>/<UTC timestamp>, e.g. reports/out/20261129T124500Z.
func OutDir(base string, t time.Time) string {
	return filepath.Join(base, t.UTC().Format("20060102T150405Z"))
}
