package reports

import (
	"bytes"
	_ "embed"
	"fmt"
	"html/template"
	"os"
	"path/filepath"

	"github.com/nqos/nqos/harness/results"
)

// FabricFile is the verify page written into a report directory.
const FabricFile = "verify.html"

//go:embed fabric.html.tmpl
var fabricTmpl string

// WriteFabric renders the page into dir/verify.html and returns its path.
func WriteFabric(dir string, p results.FabricPage) (string, error) {
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
