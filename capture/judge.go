package capture

import (
	"fmt"
	"os"
	"time"

	"github.com/nqos/nqos/flow"
)

// JudgeOptions tune Judge; zero values take the defaults.
type JudgeOptions struct {
	Tolerance   PolicingTolerance // default: 2 ms jitter
	Settle      time.Duration     // steady state starts this long after a flow's first judged frame; default 300 ms
	MinFraction float64           // overloaded UDP floor as a fraction of the rate; default 0.9
}

// Judge applies the standard verdicts of an analysis, in a stable order:
// DSCP (or unmarked) per flow with such an expectation, the token-bucket
// bound per meter, and the throughput floor per overloaded UDP flow
// (offered Rate >= 2x its meter rate).
func Judge(a *Analysis, expect map[string]flow.Expect, opts JudgeOptions) []Verdict {
	if opts.Tolerance == (PolicingTolerance{}) {
		opts.Tolerance.Jitter = 2 * time.Millisecond
	}
	if opts.Settle == 0 {
		opts.Settle = 300 * time.Millisecond
	}
	if opts.MinFraction == 0 {
		opts.MinFraction = 0.9
	}
	var vs []Verdict
	for _, fr := range a.Flows {
		if e, ok := expect[fr.Spec.Name]; ok && (e.DSCP != nil || e.Unmarked) {
			vs = append(vs, DSCPVerdict(fr, e))
		}
	}
	for _, b := range a.Buckets {
		vs = append(vs, PolicingVerdict(b, opts.Tolerance))
	}
	for _, fr := range a.Flows {
		e, ok := expect[fr.Spec.Name]
		if ok && e.Policed() && fr.Spec.Protocol == flow.UDP && float64(fr.Spec.Rate) >= 2*e.RateBits() {
			vs = append(vs, ThroughputVerdict(fr, e, opts.Settle, opts.MinFraction))
		}
	}
	return vs
}

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
