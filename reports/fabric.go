package reports

import (
	"bytes"
	_ "embed"
	"fmt"
	"html/template"
	"os"
	"path/filepath"
)

// FabricFile is the verify page written into a report directory.
const FabricFile = "verify.html"

//go:embed fabric.html.tmpl
var fabricTmpl string

// FabricPage is what `nqos-sim verify` shows: per OVN version the fabric
// view (VM × class → DSCP, meter, winning rule), and the classes whose
// outcome differs between versions.
type FabricPage struct {
	Source      string // the manifest set
	Views       []FabricView
	DiffHeader  []string
	Differences [][]string
}

// FabricView is one OVN version's fabric view.
type FabricView struct {
	OVNVersion string
	Rows       []FabricRow
	Shadowed   []string
	Failures   []string
	RunReport  string // the scenario report of the run, relative to the page
}

// FabricRow is one VM's class: what the compiled intent, ovn-trace and the
// uplink capture each say.
type FabricRow struct {
	VM, Family, Class          string
	DSCP, Meter, Rule          string
	Trace, Wire, Policed, Note string
	Agree                      bool
}

// WriteFabric renders the page into dir/verify.html and returns its path.
func WriteFabric(dir string, p FabricPage) (string, error) {
	t, err := template.New("fabric").Parse(fabricTmpl)
	if err != nil {
		return "", fmt.Errorf("fabric template: %w", err)
	}
	var buf bytes.Buffer
	if err := t.Execute(&buf, p); err != nil {
		return "", fmt.Errorf("fabric page: %w", err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("report dir %s: %w", dir, err)
	}
	path := filepath.Join(dir, FabricFile)
	return path, writeAtomic(path, buf.Bytes())
}
