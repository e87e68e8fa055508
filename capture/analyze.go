package capture

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"slices"
	"time"

	"github.com/nqos/nqos/flow"
)

// AnalyzeOptions configures a streaming analysis.
type AnalyzeOptions struct {
	Source  string                 // name used in errors (file path)
	Ready   time.Time              // readiness point: earlier frames are counted apart and not judged
	Origin  time.Time              // series origin; zero = first frame of the capture
	Windows []time.Duration        // series window sizes; default 100ms and 1s
	Expect  map[string]flow.Expect // by flow name; policed flows get a Bucket
	Samples int                    // unmatched frames described in Analysis.UnmatchedSamples; default 10
}

// Counts is a packet/byte/DSCP tally.
type Counts struct {
	Packets uint64
	Bytes   uint64 // captured frame bytes (original length)
	DSCP    [64]uint64
}

func (c *Counts) add(bytes int, dscp uint8) {
	c.Packets++
	c.Bytes += uint64(bytes)
	c.DSCP[dscp]++
}

// DSCPHistogram returns the non-zero DSCP buckets as value -> packets.
func (c *Counts) DSCPHistogram() map[int]uint64 {
	h := map[int]uint64{}
	for v, n := range c.DSCP {
		if n > 0 {
			h[v] = n
		}
	}
	return h
}

// FlowResult is what the capture saw of one flow.
type FlowResult struct {
	Spec flow.Spec
	Counts
	BeforeReady Counts // frames before the readiness point (not judged)
	Reverse     Counts // frames of the flow's reverse direction (replies, ACKs)
	First, Last time.Time
	Seq         SeqStats
	Series      []*Series // one per AnalyzeOptions.Windows entry
}

// Analysis is the result of classifying every frame of a capture.
type Analysis struct {
	Flows            []*FlowResult // in the order of the specs
	Buckets          []*Bucket     // policed meters, sorted by key
	Total            uint64
	Unmatched        Counts // IP frames of no flow
	ICMPErrors       Counts // ICMP errors (not marked by OVN): never attributed to a flow
	NonIP            uint64 // ARP, LLDP, probes
	Malformed        uint64
	UnmatchedSamples []string
	Start, End       time.Time
}

// Flow returns the result of the named flow, or nil.
func (a *Analysis) Flow(name string) *FlowResult {
	for _, f := range a.Flows {
		if f.Spec.Name == name {
			return f
		}
	}
	return nil
}

// Bucket returns the named meter's bucket check, or nil.
func (a *Analysis) Bucket(key string) *Bucket {
	for _, b := range a.Buckets {
		if b.Key == key {
			return b
		}
	}
	return nil
}

// analyzer carries the streaming state.
type analyzer struct {
	opts    AnalyzeOptions
	cls     *classifier
	a       *Analysis
	buckets []*Bucket // per flow index, nil = not policed
	fr      frame
}

func newAnalyzer(specs []flow.Spec, opts AnalyzeOptions) (*analyzer, error) {
	if err := flow.ValidateSet(specs); err != nil {
		return nil, fmt.Errorf("analyze %s: %w", opts.Source, err)
	}
	if len(opts.Windows) == 0 {
		opts.Windows = []time.Duration{100 * time.Millisecond, time.Second}
	}
	for _, w := range opts.Windows {
		if w <= 0 {
			return nil, fmt.Errorf("analyze %s: field Windows: window size %s must be positive", opts.Source, w)
		}
	}
	if opts.Samples == 0 {
		opts.Samples = 10
	}
	z := &analyzer{opts: opts, cls: newClassifier(specs), a: &Analysis{}, buckets: make([]*Bucket, len(specs))}
	byKey := map[string]*Bucket{}
	for i, s := range specs {
		z.a.Flows = append(z.a.Flows, &FlowResult{Spec: s})
		e, ok := opts.Expect[s.Name]
		if !ok || !e.Policed() {
			continue
		}
		key := e.MeterKey(s.Name)
		b := byKey[key]
		if b == nil {
			b = newBucket(key, e.RateBits(), e.BurstBits())
			byKey[key] = b
			z.a.Buckets = append(z.a.Buckets, b)
		} else if b.RateBits != e.RateBits() || b.BurstBits != e.BurstBits() {
			return nil, fmt.Errorf("analyze %s: flow %q: field Expect: meter %q rate/burst differ between flows", opts.Source, s.Name, key)
		}
		b.Flows = append(b.Flows, s.Name)
		z.buckets[i] = b
	}
	for name := range opts.Expect {
		if !slices.ContainsFunc(specs, func(s flow.Spec) bool { return s.Name == name }) {
			return nil, fmt.Errorf("analyze %s: field Expect: no flow named %q", opts.Source, name)
		}
	}
	slices.SortFunc(z.a.Buckets, func(x, y *Bucket) int { return cmpString(x.Key, y.Key) })
	return z, nil
}

func cmpString(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// Analyze classifies every frame of a pcap stream into the flows. Memory is
// bounded by the number of flows, series windows and sequence numbers, not
// by the number of frames.
func Analyze(r io.Reader, specs []flow.Spec, opts AnalyzeOptions) (*Analysis, error) {
	z, err := newAnalyzer(specs, opts)
	if err != nil {
		return nil, err
	}
	pr, err := newPcapReader(bufio.NewReaderSize(r, 1<<20))
	if err != nil {
		return nil, fmt.Errorf("analyze %s: read pcap header: %w", z.opts.Source, err)
	}
	if pr.linkType != linkTypeEthernet {
		return nil, fmt.Errorf("analyze %s: link type %d, want Ethernet (%d)", z.opts.Source, pr.linkType, linkTypeEthernet)
	}
	for n := 0; ; n++ {
		data, ts, wireLen, err := pr.next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("analyze %s: frame %d: %w", z.opts.Source, n+1, err)
		}
		z.add(ts, data, wireLen)
	}
	return z.a, nil
}

func (z *analyzer) add(ts time.Time, data []byte, wireLen int) {
	a := z.a
	if a.Total == 0 {
		a.Start = ts
		if z.opts.Origin.IsZero() {
			z.opts.Origin = ts
		}
	}
	a.Total++
	a.End = ts
	f := &z.fr
	decodeFrame(data, wireLen, f)
	switch f.kind {
	case kindNonIP:
		a.NonIP++
		return
	case kindMalformed:
		a.Malformed++
		return
	case kindICMPError:
		a.ICMPErrors.add(wireLen, f.dscp)
		return
	}
	idx, reverse := z.cls.lookup(f)
	if idx == noFlow {
		a.Unmatched.add(wireLen, f.dscp)
		if len(a.UnmatchedSamples) < z.opts.Samples {
			a.UnmatchedSamples = append(a.UnmatchedSamples, describe(f))
		}
		return
	}
	fr := a.Flows[idx]
	if reverse {
		fr.Reverse.add(wireLen, f.dscp)
		return
	}
	z.addFlow(idx, fr, ts, wireLen)
}

func (z *analyzer) addFlow(idx int, fr *FlowResult, ts time.Time, wireLen int) {
	f := &z.fr
	z.addSeries(&fr.Series, ts, wireLen)
	if _, seq, ok := flow.ParseSeqPayload(f.payload); ok {
		fr.Seq.add(seq)
	}
	if ts.Before(z.opts.Ready) {
		fr.BeforeReady.add(wireLen, f.dscp)
		return
	}
	if fr.Packets == 0 {
		fr.First = ts
	}
	fr.Last = ts
	fr.add(wireLen, f.dscp)
	if b := z.buckets[idx]; b != nil {
		b.add(ts, f.untagLen)
		z.addSeries(&b.Series, ts, f.untagLen)
	}
}

func describe(f *frame) string {
	return fmt.Sprintf("vlan=%d proto=%d %s:%d -> %s:%d dscp=%d len=%d", f.vlan, f.proto, f.src, f.sport, f.dst, f.dport, f.dscp, f.frameSize)
}

// addSeries counts a frame in every window size, creating the series on
// first use (their origin is known only after the first frame).
func (z *analyzer) addSeries(ss *[]*Series, ts time.Time, bytes int) {
	if *ss == nil {
		for _, w := range z.opts.Windows {
			*ss = append(*ss, newSeries(w, z.opts.Origin))
		}
	}
	for _, s := range *ss {
		s.add(ts, bytes)
	}
}
