package reports

import (
	_ "embed"
	"fmt"
	"github.com/nqos/nqos/harness/results"
	"html/template"
	"io"
	"strings"
	"time"

	"github.com/nqos/nqos/internal/bitrate"
)

//go:embed report.html.tmpl
var reportTemplate string

func funcs() template.FuncMap {
	return template.FuncMap{
		"dscpChart": DSCPChart,
		"rateChart": RateChart,
		"inc":       func(i int) int { return i + 1 },
		"join":      func(s []string) string { return strings.Join(s, ", ") },
		"since":     func(a, b time.Time) time.Duration { return b.Sub(a) },
		"dur":       func(d time.Duration) string { return d.Round(time.Millisecond).String() },
		"stamp":     func(t time.Time) string { return t.UTC().Format("2006-01-02 15:04:05 UTC") },
		"rate":      bitrate.Format,
		"bits":      func(b float64) string { return fmt.Sprintf("%.0f kbit", b/1000) },
		"offered": func(bps float64) string {
			if bps == 0 {
				return "unlimited"
			}
			return bitrate.Format(bps)
		},
		"flowsPassed": func(s results.Scenario) string {
			n := 0
			for _, f := range s.Flows {
				if f.Pass() {
					n++
				}
			}
			return fmt.Sprintf("%d/%d", n, len(s.Flows))
		},
	}
}

// WriteHTML renders the run as one self-contained HTML page.
func WriteHTML(w io.Writer, run *results.Run) error {
	t, err := template.New("report").Funcs(funcs()).Parse(reportTemplate)
	if err != nil {
		return fmt.Errorf("parse report template: %w", err)
	}
	if err := t.Execute(w, run); err != nil {
		return fmt.Errorf("render report of run %s: %w", run.ID, err)
	}
	return nil
}
