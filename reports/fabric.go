package reports

import (
	"bytes"
	_ "embed"
	"fmt"
	"html/template"
	"io"
	"os"
	"path/filepath"

	"github.com/nqos/nqos/harness/results"
)

// FabricFile is the verify page written into a report directory.
const FabricFile = "verify.html"

//go:embed fabric.html.tmpl
var fabricTmpl string

// RenderFabric renders the page to w.
func RenderFabric(w io.Writer, p results.FabricPage) error {
	t, err := template.New("fabric").Parse(fabricTmpl)
	if err != nil {
		return fmt.Errorf("fabric template: %w", err)
	}
	if err := t.Execute(w, p); err != nil {
		return fmt.Errorf("fabric page: %w", err)
	}
	return nil
}

// WriteFabric renders the page into dir/verify.html and returns its path.
func WriteFabric(dir string, p results.FabricPage) (string, error) {
	var buf bytes.Buffer
	if err := RenderFabric(&buf, p); err != nil {
		return "", err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("report dir %s: %w", dir, err)
	}
	path := filepath.Join(dir, FabricFile)
	return path, writeAtomic(path, buf.Bytes())
}
