package capture_test

import (
	"os/exec"
	"runtime"
	"testing"
	"time"

	"github.com/nqos/nqos/capture"
	"github.com/nqos/nqos/flow"
	"github.com/nqos/nqos/harness/traffic"
)

const benchFrames = 1_000_000

func benchSpecs() []flow.Spec {
	return []flow.Spec{
		{Name: "b-udp4", Protocol: flow.UDP, SrcIP: ipA, DstIP: ipB, SrcPort: 1000, DstPort: 5201},
		{Name: "b-tcp6", Protocol: flow.TCP, SrcIP: ipA6, DstIP: ipB6, SrcPort: 2000, DstPort: 80},
		{Name: "b-sctp6-vlan", Protocol: flow.SCTP, SrcIP: ipA6, DstIP: ipB6, SrcPort: 7, DstPort: 9, VLAN: 100},
		{Name: "b-icmp4", Protocol: flow.ICMP, SrcIP: ipA, DstIP: ipB},
	}
}

// writeBenchPcap writes n frames round-robin over the bench flows (plus an
// untagged flow matched by 5-tuple), 2 us apart.
func writeBenchPcap(tb testing.TB, n int) string {
	specs := benchSpecs()
	untagged := flow.Spec{Name: "other", Protocol: flow.UDP, SrcIP: ipA, DstIP: ipB, SrcPort: 1000, DstPort: 5201}
	var bs []*traffic.FrameBuilder
	for i, s := range append(specs, untagged) {
		bs = append(bs, builder(tb, s, []int{46, 0, 46, 10, 46}[i], 200, macA))
	}
	p := newPcap(tb, "bench.pcap")
	for i := range n {
		p.add(t0.Add(time.Duration(i)*2*time.Microsecond), frame(tb, bs[i%len(bs)], uint64(i/len(bs))))
	}
	return p.close()
}

// BenchmarkAnalyzeVsTshark measures the streaming analysis on a 1 M-frame
// pcap and, in the same run, `tshark -T fields -e ip.dsfield.dscp` on the
// same file. Metrics: pkts/s of each and the speed-up.
func BenchmarkAnalyzeVsTshark(b *testing.B) {
	path := writeBenchPcap(b, benchFrames)
	specs := benchSpecs()
	opts := capture.AnalyzeOptions{Source: path, Expect: map[string]flow.Expect{
		"b-udp4": {DSCP: flow.DSCPValue(46), MaxRateKbps: 100000, BurstKbits: 5000}}}
	tsharkPPS := 0.0
	if _, err := exec.LookPath("tshark"); err == nil {
		start := time.Now()
		cmd := exec.Command("tshark", "-n", "-r", path, "-T", "fields", "-e", "ip.dsfield.dscp")
		if err := cmd.Run(); err != nil { // stdout discarded (/dev/null)
			b.Fatal(err)
		}
		tsharkPPS = benchFrames / time.Since(start).Seconds()
	}
	var ms0, ms1 runtime.MemStats
	runtime.ReadMemStats(&ms0)
	start := time.Now()
	iters := 0
	for b.Loop() {
		a, err := capture.AnalyzeFile(path, specs, opts)
		if err != nil {
			b.Fatal(err)
		}
		if a.Total != benchFrames || a.Flow("b-udp4").Packets != 2*benchFrames/5 {
			b.Fatalf("analysis miscounted: total %d, b-udp4 %d", a.Total, a.Flow("b-udp4").Packets)
		}
		iters++
	}
	elapsed := time.Since(start)
	runtime.ReadMemStats(&ms1)
	ours := float64(benchFrames*iters) / elapsed.Seconds()
	b.ReportMetric(ours, "pkts/s")
	b.ReportMetric(float64(ms1.TotalAlloc-ms0.TotalAlloc)/float64(iters)/(1<<20), "MiB-alloc/op")
	if tsharkPPS > 0 {
		b.ReportMetric(tsharkPPS, "tshark-pkts/s")
		b.ReportMetric(ours/tsharkPPS, "speedup-x")
	}
}
