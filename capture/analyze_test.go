package capture_test

import (
	"net/netip"
	"path/filepath"
	"testing"
	"time"

	"github.com/nqos/nqos/internal/golden"

	"github.com/nqos/nqos/capture"
	"github.com/nqos/nqos/flow"
	"github.com/nqos/nqos/harness/verdict"
	"github.com/nqos/nqos/internal/testenv"
)

var (
	ipA   = netip.MustParseAddr("10.0.0.1")
	ipB   = netip.MustParseAddr("10.0.0.2")
	ipA6  = netip.MustParseAddr("fd00::1")
	ipB6  = netip.MustParseAddr("fd00::2")
	ipNon = netip.MustParseAddr("10.0.0.9")
)

// classifySpecs are the flows of the classification scenario.
func classifySpecs() []flow.Spec {
	return []flow.Spec{
		{Name: "udp4-marked", From: "vm-a", To: "host-b", Protocol: flow.UDP, SrcIP: ipA, DstIP: ipB, SrcPort: 1000, DstPort: 5201},
		{Name: "tcp6-plain", From: "vm-a", To: "host-b", Protocol: flow.TCP, SrcIP: ipA6, DstIP: ipB6, DstPort: 80},
		{Name: "icmp4", From: "vm-a", To: "host-b", Protocol: flow.ICMP, SrcIP: ipA, DstIP: ipB},
		{Name: "sctp6-vlan", From: "vm-a", To: "host-b", Protocol: flow.SCTP, SrcIP: ipA6, DstIP: ipB6, SrcPort: 7, DstPort: 9, VLAN: 100},
		// vm-c spoofs vm-a's address; its raw frames are told apart by tag.
		{Name: "spoof", From: "vm-c", To: "host-b", Protocol: flow.UDP, SrcIP: ipA, DstIP: ipB, SrcPort: 1001, DstPort: 5201},
	}
}

// writeClassifyPcap writes the scenario and returns the pcap path.
func writeClassifyPcap(t *testing.T) string {
	specs := classifySpecs()
	p := newPcap(t, "classify.pcap")
	ts := t0
	next := func() time.Time { ts = ts.Add(time.Millisecond); return ts }
	udp := builder(t, specs[0], 46, 100, macA)
	for i := range 100 {
		dscp := udp
		if i == 50 { // one frame the datapath failed to mark
			dscp = builder(t, specs[0], 0, 100, macA)
		}
		p.add(next(), frame(t, dscp, uint64(i)))
	}
	p.add(next(), frame(t, udp, 7)) // duplicate sequence number
	// TCP frames of a sender the analysis does not know by tag: 5-tuple match.
	other := flow.Spec{Name: "untagged-tcp", Protocol: flow.TCP, SrcIP: ipA6, DstIP: ipB6, SrcPort: 40000, DstPort: 80}
	tcp := builder(t, other, 10, 200, macA)
	for i := range 20 {
		p.add(next(), frame(t, tcp, uint64(i)))
		p.add(next(), tcpReply(t, specs[1], 40000))
	}
	icmp := builder(t, specs[2], 46, 56, macA)
	for i := range 5 {
		req := frame(t, icmp, uint64(i))
		p.add(next(), req)
		p.add(next(), echoReply(t, req))
	}
	sctp := builder(t, specs[3], 46, 64, macA)
	for i := range 30 {
		p.add(next(), frame(t, sctp, uint64(i)))
	}
	spoof := builder(t, specs[4], 0, 100, macC)
	for i := range 10 {
		p.add(next(), frame(t, spoof, uint64(i)))
	}
	stray := builder(t, flow.Spec{Name: "stray", Protocol: flow.UDP, SrcIP: ipA, DstIP: ipNon, SrcPort: 1, DstPort: 2}, 0, 32, macA)
	strayFrame := frame(t, stray, 0)
	p.add(next(), strayFrame)
	p.add(next(), icmpUnreachable(t, ipNon, ipA, strayFrame))
	p.add(next(), arpFrame(t))
	p.add(next(), []byte{1, 2, 3})
	return p.close()
}

func TestAnalyzeClassification(t *testing.T) {
	path := writeClassifyPcap(t)
	a, err := capture.AnalyzeFile(path, classifySpecs(), capture.AnalyzeOptions{Ready: t0.Add(10*time.Millisecond + time.Microsecond)})
	if err != nil {
		t.Fatal(err)
	}
	golden.Check(t, filepath.Join("testdata", "classify.golden"), []byte(a.Summary()))
	udp := a.Flow("udp4-marked")
	cases := []struct {
		name      string
		got, want uint64
	}{
		{"udp judged packets", udp.Packets, 91}, // 101 frames, 10 before ready
		{"udp before ready", udp.BeforeReady.Packets, 10},
		{"udp dscp46", udp.DSCP[46], 90}, // frame 50 unmarked
		{"udp dscp0", udp.DSCP[0], 1},
		{"udp seq distinct", udp.Seq.Distinct, 100},
		{"udp seq duplicates", udp.Seq.Duplicates, 1},
		{"udp seq missing of 100", udp.Seq.Missing(100), 0},
		{"udp seq missing of 101", udp.Seq.Missing(101), 1},
		{"tcp forward", a.Flow("tcp6-plain").Packets, 20},
		{"tcp dscp10", a.Flow("tcp6-plain").DSCP[10], 20},
		{"tcp reverse", a.Flow("tcp6-plain").Reverse.Packets, 20},
		{"icmp requests", a.Flow("icmp4").Packets, 5},
		{"icmp replies", a.Flow("icmp4").Reverse.Packets, 5},
		{"sctp vlan", a.Flow("sctp6-vlan").Packets, 30},
		{"spoof by tag", a.Flow("spoof").Packets, 10},
		{"unmatched", a.Unmatched.Packets, 1},
		{"icmp errors", a.ICMPErrors.Packets, 1},
		{"non-ip", a.NonIP, 1},
		{"malformed", a.Malformed, 1},
	}
	for _, c := range cases {
		if c.got != c.want {
			t.Errorf("%s = %d, want %d", c.name, c.got, c.want)
		}
	}
	if udp.Bytes != 91*uint64(len(frame(t, builder(t, classifySpecs()[0], 46, 100, macA), 0))) {
		t.Errorf("udp bytes = %d", udp.Bytes)
	}
	if v := verdict.DSCPMark(udp, flow.Expect{DSCP: flow.DSCPValue(46)}); v.Pass {
		t.Errorf("one unmarked frame out of 91 must fail: %s", v)
	}
	if v := verdict.DSCPMark(a.Flow("sctp6-vlan"), flow.Expect{DSCP: flow.DSCPValue(46)}); !v.Pass {
		t.Errorf("sctp fully marked must pass: %s", v)
	}
	if v := verdict.DSCPMark(a.Flow("tcp6-plain"), flow.Expect{DSCP: flow.DSCPValue(46), Unmarked: true}); !v.Pass {
		t.Errorf("tcp carries 10, not 46: %s", v)
	}
	if v := verdict.DSCPMark(a.Flow("tcp6-plain"), flow.Expect{Unmarked: true}); v.Pass {
		t.Errorf("tcp carries non-zero DSCP 10, Unmarked without DSCP must fail: %s", v)
	}
	if v := verdict.DSCPMark(a.Flow("spoof"), flow.Expect{DSCP: flow.DSCPValue(46), Unmarked: true}); !v.Pass {
		t.Errorf("spoof unmarked: %s", v)
	}
}

// TestPcapReadableByTshark reads the synthetic capture back with tshark
// and compares its counts with the analysis (including VLAN decoding).
func TestPcapReadableByTshark(t *testing.T) {
	testenv.Binaries(t, "tshark")
	path := writeClassifyPcap(t)
	for _, c := range []struct {
		filter string
		want   int
	}{
		{"", 100 + 1 + 40 + 10 + 30 + 10 + 4},
		{"vlan.id == 100", 30},
		{"ip.dsfield.dscp == 46", 100 + 5}, // 101 UDP frames (one unmarked), 5 echo requests
		{"ipv6.tclass == 0x28", 20},
		{"icmp.type == 3", 1},
	} {
		if got := testenv.TsharkCount(t, path, c.filter); got != c.want {
			t.Errorf("tshark filter %q: %d frames, want %d", c.filter, got, c.want)
		}
	}
}
