package localnetenv

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net"
	"slices"
	"sync"
	"time"

	"github.com/nqos/nqos/capture"
	"github.com/nqos/nqos/flow"
	"github.com/nqos/nqos/harness"
	"github.com/nqos/nqos/harness/traffic"
	"github.com/nqos/nqos/reports"
	"github.com/nqos/nqos/scenarios"
)

// window is the rate-series window of the report charts; settle is when
// a policed flow's steady state starts after its first judged frame.
const (
	window = 100 * time.Millisecond
	settle = 300 * time.Millisecond
)

// tolerance is the slack on the token-bucket bound rate·T + burst: 2 ms of
// capture timestamp jitter (rate·2ms) plus two whole frames, because on a
// loaded 2-core machine AF_PACKET timestamps of back-to-back frames can be
// compressed by about one frame beyond the jitter (measured: 5 205 769 bits
// against 5 000 000 + 200 000 on a TCP flow).
func tolerance() capture.PolicingTolerance {
	return capture.PolicingTolerance{Jitter: 2 * time.Millisecond, Frames: 2}
}

// running is a group of flows with one uplink capture per sending node.
type running struct {
	e      *Env
	runs   []harness.FlowRun
	caps   map[string]*capture.Capture // by pcap path
	errs   []error                     // per run: the sender's error
	closer []func() error              // iperf3 servers started in VMs
	wg     sync.WaitGroup
	cancel context.CancelFunc
}

// Start starts one capture per sending node, waits until each sees its
// probe, then starts every flow's sender.
func (e *Env) Start(ctx context.Context, runs []harness.FlowRun) (harness.Running, error) {
	r := &running{e: e, runs: runs, caps: map[string]*capture.Capture{}, errs: make([]error, len(runs))}
	for _, run := range runs {
		if r.caps[run.Pcap] != nil {
			continue
		}
		netns, ifname, err := e.tb.UplinkCapturePoint(e.nodeName(run.Node))
		if err == nil {
			r.caps[run.Pcap], err = capture.Start(ctx, capture.Options{Netns: netns, Interface: ifname, PcapPath: run.Pcap})
		}
		if err != nil {
			r.closeCaptures()
			return nil, fmt.Errorf("capture node %d uplink for flow %s: %w", run.Node, run.Name, err)
		}
	}
	senders := make([]func(context.Context) error, len(runs))
	for i, run := range runs {
		send, err := e.sender(ctx, r, run)
		if err != nil {
			r.closeCaptures()
			r.closeServers()
			return nil, err
		}
		senders[i] = send
	}
	tctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	r.cancel = cancel
	for i := range runs {
		r.wg.Add(1)
		go func() {
			defer r.wg.Done()
			r.errs[i] = senders[i](tctx)
		}()
	}
	return r, nil
}

func (r *running) closeCaptures() {
	for _, c := range r.caps {
		_ = c.Close()
	}
}

func (r *running) closeServers() {
	for _, c := range r.closer {
		_ = c()
	}
}

// sender prepares one flow's traffic source in its VM's guest.
func (e *Env) sender(ctx context.Context, r *running, run harness.FlowRun) (func(context.Context) error, error) {
	vm := e.sc.VM(run.Spec.From)
	in, err := e.vms.Get(vm.Namespace, vm.Name)
	if err != nil {
		return nil, fmt.Errorf("flow %s: %w", run.Name, err)
	}
	wire := run.Spec
	wire.VLAN = 0 // the guest sends untagged; OVN's localnet port tags
	if run.Tool == scenarios.ToolPackets {
		return e.injector(ctx, run, wire, in.Netns, in.NICs[0])
	}
	if peer := e.sc.VM(run.Spec.To); peer != nil {
		pin, err := e.vms.Get(peer.Namespace, peer.Name)
		if err != nil {
			return nil, fmt.Errorf("flow %s: %w", run.Name, err)
		}
		srv, err := traffic.IperfServer(ctx, pin.Netns, wire.DstIP, wire.DstPort)
		if err != nil {
			return nil, fmt.Errorf("flow %s: iperf3 server in %s: %w", run.Name, peer.Name, err)
		}
		r.closer = append(r.closer, srv.Close)
	}
	return func(ctx context.Context) error {
		_, err := traffic.IperfClient(ctx, in.Netns, wire, traffic.IperfOptions{})
		return err
	}, nil
}

// injector sends raw sequence-numbered frames from the guest NIC to the
// destination's MAC.
func (e *Env) injector(ctx context.Context, run harness.FlowRun, wire flow.Spec, netns, nic string) (func(context.Context) error, error) {
	src, err := e.mac(ctx, netns, nic)
	if err != nil {
		return nil, fmt.Errorf("flow %s: %w", run.Name, err)
	}
	dstNetns, dstIf, err := e.endpoint(run.Spec.To)
	if err != nil {
		return nil, fmt.Errorf("flow %s: %w", run.Name, err)
	}
	dst, err := e.mac(ctx, dstNetns, dstIf)
	if err != nil {
		return nil, fmt.Errorf("flow %s: %w", run.Name, err)
	}
	raw := traffic.RawSpec{Flow: wire, SrcMAC: src, DstMAC: dst}
	return func(ctx context.Context) error {
		_, err := traffic.Inject(ctx, netns, nic, raw)
		return err
	}, nil
}

// endpoint is the namespace and interface of a VM's NIC or a host's port.
func (e *Env) endpoint(name string) (netns, ifname string, err error) {
	if vm := e.sc.VM(name); vm != nil {
		in, err := e.vms.Get(vm.Namespace, vm.Name)
		if err != nil {
			return "", "", err
		}
		return in.Netns, in.NICs[0], nil
	}
	h, ok := e.tb.Host(name)
	if !ok {
		return "", "", fmt.Errorf("no VM or host %q on the testbed", name)
	}
	return h.Netns, h.Ifname, nil
}

func (e *Env) mac(ctx context.Context, netns, ifname string) (net.HardwareAddr, error) {
	return e.tb.LinkMAC(netns, ifname)
}

// Finish waits for the senders, stops the captures and judges each
// capture with the flows sent from its node.
func (r *running) Finish(ctx context.Context) ([]harness.Measured, error) {
	done := make(chan struct{})
	go func() { r.wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-ctx.Done():
		r.cancel()
		<-done
	}
	r.cancel()
	r.closeServers()
	out := make([]harness.Measured, len(r.runs))
	var errs []error
	for _, path := range slices.Sorted(maps.Keys(r.caps)) { // errors in a stable order
		c := r.caps[path]
		stats, err := c.Stop() // Stop releases everything Close would
		if err != nil {
			errs = append(errs, fmt.Errorf("capture %s: %w", path, err))
			continue
		}
		if err := r.judge(path, stats, out); err != nil {
			errs = append(errs, err)
		}
	}
	for i, err := range r.errs {
		if err != nil {
			out[i].Verdicts = append(out[i].Verdicts, reports.Verdict{Check: "traffic", Pass: false,
				Message: fmt.Sprintf("FAIL %s traffic: %v", r.runs[i].Name, err)})
		}
	}
	return out, errors.Join(errs...)
}

// judge analyses one node's capture and fills the measurements of the
// runs it holds.
func (r *running) judge(path string, stats capture.Stats, out []harness.Measured) error {
	var idx []int
	var specs []flow.Spec
	expect := map[string]flow.Expect{}
	floor := 1.0
	for i, run := range r.runs {
		if run.Pcap == path {
			idx = append(idx, i)
			specs = append(specs, run.Spec)
			expect[run.Spec.Name] = run.Expect
			floor = min(floor, run.Floor)
		}
	}
	a, err := capture.AnalyzeFile(path, specs, capture.AnalyzeOptions{Ready: stats.Ready, Windows: []time.Duration{window}, Expect: expect})
	if err != nil {
		return err
	}
	verdicts := sharedFloors(a, capture.Judge(a, expect, capture.JudgeOptions{MinFraction: floor, Settle: settle, Tolerance: tolerance()}), expect, floor)
	for _, i := range idx {
		out[i] = measured(a.Flow(r.runs[i].Spec.Name), r.runs[i], verdicts)
	}
	return nil
}

// measured converts the capture's view of one flow; verdicts of the flow
// and of its meter are attached.
func measured(fr *capture.FlowResult, run harness.FlowRun, vs []capture.Verdict) harness.Measured {
	m := harness.Measured{Packets: fr.Packets, Bytes: fr.Bytes, DSCP: fr.DSCPHistogram(), Window: window}
	if len(fr.Series) > 0 && !fr.First.IsZero() {
		s := fr.Series[0]
		from, to := int(fr.First.Sub(s.Origin)/s.Size), int(fr.Last.Sub(s.Origin)/s.Size)
		for i := max(from, 0); i <= to && i < len(s.Windows); i++ {
			m.Rate = append(m.Rate, s.Windows[i].BitsPerSecond(s.Size))
		}
	}
	names := []string{run.Spec.Name}
	if run.Expect.Policed() {
		names = append(names, run.Expect.MeterKey(run.Spec.Name))
	}
	for _, v := range vs {
		if slices.Contains(names, v.Flow) {
			m.Verdicts = append(m.Verdicts, reports.Verdict{Check: v.Property, Pass: v.Pass, Message: v.Message})
		}
	}
	return m
}

// sharedFloors replaces the per-flow policing floors of a meter shared by
// several flows (one QoS row is one meter per node: the flows split its
// rate unevenly) with one floor on their aggregate steady rate, judged
// like capture.ThroughputVerdict: rate·floor <= sum <= rate + burst/T.
func sharedFloors(a *capture.Analysis, vs []capture.Verdict, expect map[string]flow.Expect, floor float64) []capture.Verdict {
	shared := map[string]*capture.Bucket{}
	for _, b := range a.Buckets {
		if len(b.Flows) > 1 {
			shared[b.Key] = b
		}
	}
	if len(shared) == 0 {
		return vs
	}
	out := slices.DeleteFunc(slices.Clone(vs), func(v capture.Verdict) bool {
		e, ok := expect[v.Flow]
		return ok && v.Property == "policing-floor" && shared[e.MeterKey(v.Flow)] != nil
	})
	for _, key := range slices.Sorted(maps.Keys(shared)) {
		out = append(out, aggregateFloor(a, shared[key], floor))
	}
	return out
}

// aggregateFloor judges the meter's aggregate steady rate over the common
// steady interval of its flows (window by window; all series of one
// analysis share the capture's origin), counting untagged frame bytes as
// the meter does.
func aggregateFloor(a *capture.Analysis, b *capture.Bucket, floor float64) capture.Verdict {
	var from, to time.Time
	var series []*capture.Series
	var vlan bool
	for i, name := range b.Flows {
		fr := a.Flow(name)
		if fr == nil || len(fr.Series) == 0 || fr.Packets == 0 {
			continue
		}
		series = append(series, fr.Series[0])
		vlan = vlan || fr.Spec.VLAN != 0
		if first := fr.First.Add(settle); i == 0 || first.After(from) {
			from = first
		}
		if i == 0 || fr.Last.Before(to) {
			to = fr.Last
		}
	}
	var bits float64
	var d time.Duration
	if len(series) == len(b.Flows) {
		bits, d = commonBits(series, from, to, vlan)
	}
	lo := b.RateBits * floor
	v := capture.Verdict{Flow: b.Key, Property: "policing-floor-aggregate", Bound: lo, Unit: "bit/s"}
	if d <= 0 {
		v.Message = fmt.Sprintf("FAIL %s policing-floor-aggregate: flows %v have no common steady-state window", b.Key, b.Flows)
		return v
	}
	sum := bits / d.Seconds()
	hi := b.RateBits + b.BurstBits/d.Seconds()
	v.Pass, v.Measured, v.Tolerance = sum >= lo && sum <= hi, sum, hi-lo
	state := "FAIL"
	if v.Pass {
		state = "PASS"
	}
	v.Message = fmt.Sprintf("%s %s policing-floor-aggregate: flows %v together %.2f Mbit/s (untagged frames, common steady %s), required %.2f..%.2f Mbit/s: one meter shared per rule per node",
		state, b.Key, b.Flows, sum/1e6, d, lo/1e6, hi/1e6)
	return v
}

// commonBits sums the bits of the windows lying wholly in [from, to] over
// all series; untagged removes the 802.1Q tag the meter does not count.
func commonBits(series []*capture.Series, from, to time.Time, untagged bool) (float64, time.Duration) {
	var bits float64
	var n int
	size := series[0].Size
	for i, w := range series[0].Windows {
		if w.Start.Before(from) || w.Start.Add(size).After(to) {
			continue
		}
		n++
		for _, s := range series {
			if i < len(s.Windows) {
				bytes := float64(s.Windows[i].Bytes)
				if untagged {
					bytes -= 4 * float64(s.Windows[i].Packets)
				}
				bits += 8 * bytes
			}
		}
	}
	return bits, time.Duration(n) * size
}
