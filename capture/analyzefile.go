package capture

import (
	"fmt"
	"os"

	"github.com/nqos/nqos/flow"
)

// AnalyzeFile runs Analyze on a pcap file (opts.Source defaults to path).
func AnalyzeFile(path string, specs []flow.Spec, opts AnalyzeOptions) (*Analysis, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("analyze %s: %w", path, err)
	}
	defer f.Close()
	if opts.Source == "" {
		opts.Source = path
	}
	return Analyze(f, specs, opts)
}
