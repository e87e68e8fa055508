package capture_test

import (
	"testing"
	"time"

	"github.com/nqos/nqos/capture"
	"github.com/nqos/nqos/flow"
	"github.com/nqos/nqos/harness/verdict"
)

const (
	testRateKbps  = 100000 // 100 Mbit/s
	testBurstKbit = 5000   // 5 Mbit
)

var policedExpect = flow.Expect{DSCP: flow.DSCPValue(46), MaxRateKbps: testRateKbps, BurstKbits: testBurstKbit}

func policedSpec() flow.Spec {
	return flow.Spec{Name: "udp-over", Protocol: flow.UDP, SrcIP: ipA, DstIP: ipB, SrcPort: 1000, DstPort: 5201, Rate: 200e6}
}

// writeOffered writes an offered-bit/s stream of equal frames for dur; when
// meter is true, frames are first passed through a simulated OVS meter
// (bucket of burst bits, starts full, refills at rate) and only the
// passed ones are written.
func writeOffered(t *testing.T, dur time.Duration, meter bool, offered float64) (path string, sent, passed int) {
	b := builder(t, policedSpec(), 46, 1200, macA)
	fr := frame(t, b, 0)
	bits := float64(len(fr) * 8)
	interval := time.Duration(bits / offered * float64(time.Second))
	rate, burst := float64(testRateKbps)*1000, float64(testBurstKbit)*1000
	tokens, last := burst, t0
	p := newPcap(t, "policed.pcap")
	for at := t0; at.Sub(t0) < dur; at = at.Add(interval) {
		sent++
		if meter {
			tokens = min(burst, tokens+rate*at.Sub(last).Seconds())
			last = at
			if tokens < bits {
				continue
			}
			tokens -= bits
		}
		passed++
		p.add(at, frame(t, b, uint64(sent-1)))
	}
	return p.close(), sent, passed
}

func analyzePolicing(t *testing.T, path string) *capture.Analysis {
	a, err := capture.AnalyzeFile(path, []flow.Spec{policedSpec()}, capture.AnalyzeOptions{
		Ready: t0, Origin: t0, Expect: map[string]flow.Expect{"udp-over": policedExpect}})
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func TestPolicingVerdicts(t *testing.T) {
	tol := verdict.PolicingTolerance{Jitter: time.Millisecond}
	cases := []struct {
		name      string
		meter     bool
		offered   float64
		wantBound bool
		wantFloor bool
	}{
		{"metered 2x stream complies", true, 200e6, true, true},
		{"unmetered 2x stream violates", false, 200e6, false, false},
		{"metered 0.8x stream is under the floor", true, 80e6, true, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			path, sent, passed := writeOffered(t, 2*time.Second, c.meter, c.offered)
			a := analyzePolicing(t, path)
			b := a.Bucket("udp-over")
			if b == nil || b.Packets != uint64(passed) {
				t.Fatalf("bucket %+v, want %d packets (sent %d)", b, passed, sent)
			}
			var sum uint64
			for _, w := range b.Series[1].Windows {
				sum += w.Bytes
			}
			if sum != b.Bytes || len(b.Series) != 2 || b.Series[1].Size != time.Second {
				t.Errorf("meter series: %d bytes in 1 s windows, bucket %d", sum, b.Bytes)
			}
			if v := verdict.Bound(b, tol); v.Pass != c.wantBound {
				t.Errorf("bound verdict pass=%v, want %v: %s", v.Pass, c.wantBound, v)
			}
			if v := verdict.Floor(a.Flow("udp-over"), policedExpect, 200*time.Millisecond, 0.9); v.Pass != c.wantFloor {
				t.Errorf("floor verdict pass=%v, want %v: %s", v.Pass, c.wantFloor, v)
			} else {
				t.Log(v)
			}
			if v := verdict.DSCPMark(a.Flow("udp-over"), policedExpect); !v.Pass {
				t.Errorf("dscp: %s", v)
			}
			if v := verdict.Accounting("udp-over", uint64(sent), a.Flow("udp-over").Packets, uint64(sent-passed), 0); !v.Pass {
				t.Errorf("accounting: %s", v)
			}
		})
	}
}

// TestPolicingSlidingInterval: every aligned 100 ms window stays under
// rate*100ms + burst, yet 10 ms straddling a window edge carry far more than
// rate*10ms + burst. The sliding check must fail where windows pass.
func TestPolicingSlidingInterval(t *testing.T) {
	b := builder(t, policedSpec(), 46, 1200, macA)
	fr := frame(t, b, 0)
	perBurst := int(10.5e6 / float64(len(fr)*8)) // 10.5 Mbit in 5 ms on each side of the edge
	p := newPcap(t, "edge.pcap")
	seq := uint64(0)
	for _, start := range []time.Duration{95 * time.Millisecond, 100 * time.Millisecond} {
		for i := range perBurst {
			p.add(t0.Add(start+time.Duration(i)*5*time.Millisecond/time.Duration(perBurst)), frame(t, b, seq))
			seq++
		}
	}
	a := analyzePolicing(t, p.close())
	limit := uint64((float64(testRateKbps)*1000*0.1 + float64(testBurstKbit)*1000) / 8)
	for _, w := range a.Flow("udp-over").Series[0].Windows {
		if w.Bytes > limit {
			t.Fatalf("setup: window at %s has %d bytes > %d", w.Start, w.Bytes, limit)
		}
	}
	if v := verdict.Bound(a.Bucket("udp-over"), verdict.PolicingTolerance{Jitter: time.Millisecond}); v.Pass {
		t.Errorf("sliding-interval violation not detected: %s", v)
	}
}

func TestAnalyzeRejectsBadInput(t *testing.T) {
	path, _, _ := writeOffered(t, 10*time.Millisecond, false, 200e6)
	_, err := capture.AnalyzeFile(path, []flow.Spec{policedSpec()}, capture.AnalyzeOptions{
		Expect: map[string]flow.Expect{"nope": policedExpect}})
	if err == nil {
		t.Fatal("expectation for an unknown flow accepted")
	}
	bad := policedSpec()
	bad.Protocol = "gre"
	if _, err := capture.AnalyzeFile(path, []flow.Spec{bad}, capture.AnalyzeOptions{}); err == nil {
		t.Fatal("bad flow accepted")
	}
}
