package live_test

import (
	"context"
	"net"
	"net/netip"
	"path/filepath"
	"testing"
	"time"

	"github.com/nqos/nqos/capture"
	"github.com/nqos/nqos/capture/live"
	"github.com/nqos/nqos/flow"
	"github.com/nqos/nqos/harness/traffic"
	"github.com/nqos/nqos/internal/testenv"
)

// phase is one traffic step with the meter counters around it.
type phase struct {
	flows []string // flows whose frames crossed the meter in this phase
	sent  uint64   // frames the guest sent through the meter (raw phases; 0 = unknown)
	meter live.MeterStats
}

type run struct {
	t       *testing.T
	m       *miniBed
	ctx     context.Context
	specs   []flow.Spec
	expect  map[string]flow.Expect
	phases  []phase
	results map[string]*traffic.IperfResult

	meterStart, meterEnd live.MeterStats
	sent                 map[string]uint64 // raw flows: frames the injector sent
}

var (
	marked  = flow.Expect{DSCP: flow.DSCPValue(46), MaxRateKbps: meterRateKbps, BurstKbits: meterBurstKbit, Meter: "meter-1"}
	plainTo = flow.Expect{DSCP: flow.DSCPValue(46), Unmarked: true}
)

func (r *run) meterStats() live.MeterStats {
	r.t.Helper()
	ms, err := live.ReadMeterStats(r.ctx, r.m.ovs.Mgmt("br0"))
	if err != nil {
		r.t.Fatal(err)
	}
	m, ok := live.Meter(ms, 1)
	if !ok {
		r.t.Fatalf("meter 1 missing from %+v", ms)
	}
	return m
}

// raw injects one raw flow from the guest and records it.
func (r *run) raw(spec flow.Spec, e flow.Expect, dscp int, srcMAC string, count uint64, pps float64, payload int) traffic.InjectReport {
	r.t.Helper()
	smac, _ := net.ParseMAC(srcMAC)
	dmac, _ := net.ParseMAC(r.m.peerMAC)
	before := r.meterStats()
	rep, err := traffic.Inject(r.ctx, r.m.guest, "eth0", traffic.RawSpec{Flow: spec, SrcMAC: smac, DstMAC: dmac,
		DSCP: dscp, Count: count, PPS: pps, PayloadSize: payload})
	if err != nil {
		r.t.Fatal(err)
	}
	r.add(spec, e)
	r.sent[spec.Name] = rep.Sent
	if e.Policed() {
		r.phases = append(r.phases, phase{flows: []string{spec.Name}, sent: rep.Sent, meter: r.settledMeter(before)})
	}
	r.t.Logf("raw %s: sent %d frames of %d bytes in %s, %.0f frames/s (%d send errors)", spec.Name, rep.Sent, rep.FrameLen, rep.End.Sub(rep.Start).Round(time.Millisecond), rep.PPS, rep.SendErrors)
	return rep
}

// settledMeter polls the meter until its counters stop moving (the
// datapath has drained) and returns the delta since before.
func (r *run) settledMeter(before live.MeterStats) live.MeterStats {
	r.t.Helper()
	last := r.meterStats()
	deadline := time.Now().Add(5 * time.Second)
	for tick := time.NewTicker(50 * time.Millisecond); time.Now().Before(deadline); {
		<-tick.C
		cur := r.meterStats()
		if cur.PacketInCount == last.PacketInCount {
			tick.Stop()
			return cur.Sub(before)
		}
		last = cur
	}
	r.t.Fatal("meter counters still moving after 5s")
	return live.MeterStats{}
}

func (r *run) add(spec flow.Spec, e flow.Expect) {
	r.specs = append(r.specs, spec)
	r.expect[spec.Name] = e
}

// iperf runs a one-shot server in the peer and a client in the guest.
func (r *run) runIperf(spec flow.Spec, e flow.Expect, ctl *flow.Spec, length int) {
	r.t.Helper()
	srv, err := traffic.IperfServer(r.ctx, r.m.peer, spec.DstIP, spec.DstPort)
	if err != nil {
		r.t.Fatal(err)
	}
	defer srv.Close()
	res, err := traffic.IperfClient(r.ctx, r.m.guest, spec, traffic.IperfOptions{Length: length})
	if err != nil {
		r.t.Fatal(err)
	}
	if _, err := srv.Wait(r.ctx); err != nil {
		r.t.Fatal(err)
	}
	r.results[spec.Name] = res
	r.add(spec, e)
	if ctl != nil {
		r.add(*ctl, e)
	}
	r.t.Logf("iperf3 %s: sender %d bytes %.1f Mbit/s %d packets; receiver %d bytes %.1f Mbit/s %d packets lost %d",
		spec.Name, res.Sender.Bytes, res.Sender.BitsPerSecond/1e6, res.Sender.Packets,
		res.Receiver.Bytes, res.Receiver.BitsPerSecond/1e6, res.Receiver.Packets, res.Receiver.LostPackets)
}

func TestIntegrationMarkAndPolice(t *testing.T) {
	m := newMiniBed(t, "c1")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	pcap := filepath.Join(t.TempDir(), "c1-peer-eth0.pcap")
	c, err := live.Start(ctx, live.Options{Netns: m.peer, Interface: "eth0", PcapPath: pcap})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	// The OVS rules exist before the capture starts: the readiness point is
	// the moment the capture confirmed it was receiving.
	ready := time.Now()
	r := &run{t: t, m: m, ctx: ctx, expect: map[string]flow.Expect{}, results: map[string]*traffic.IperfResult{}, sent: map[string]uint64{}}
	r.meterStart = r.meterStats()
	sendRaw(r)
	sendIperf(r)
	r.meterEnd = r.settledMeter(live.MeterStats{})
	st, err := c.Stop()
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("capture: %d frames, %d bytes, %d kernel drops, ready %s after start", st.Packets, st.Bytes, st.KernelDrops, st.Ready.Sub(st.Started))
	if st.KernelDrops != 0 {
		t.Errorf("capture socket dropped %d frames: the analysis would be incomplete", st.KernelDrops)
	}
	if got := testenv.TsharkCount(t, pcap, ""); uint64(got) != st.Packets {
		t.Errorf("tshark reads %d frames from %s, capture wrote %d", got, pcap, st.Packets)
	}
	a, err := capture.AnalyzeFile(pcap, r.specs, capture.AnalyzeOptions{Ready: ready, Expect: r.expect})
	if err != nil {
		t.Fatal(err)
	}
	t.Log("\n" + a.Summary())
	judge(t, r, a)
	if got := testenv.TsharkCount(t, pcap, "vlan.id == 100"); uint64(got) != a.Flow("raw-udp4-vlan").Packets+a.Flow("raw-udp4-vlan").BeforeReady.Packets {
		t.Errorf("tshark sees %d VLAN 100 frames, analysis %d", got, a.Flow("raw-udp4-vlan").Packets)
	}
}

type testingT interface {
	Helper()
	Log(args ...any)
	Error(args ...any)
}

func mustAddr(s string) netip.Addr { return netip.MustParseAddr(s) }
