package localnetenv

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/nqos/nqos/capture"
	"github.com/nqos/nqos/capture/live"
	"github.com/nqos/nqos/flow"
	"github.com/nqos/nqos/harness"
	"github.com/nqos/nqos/harness/traffic"
	"github.com/nqos/nqos/internal/poll"
	"github.com/nqos/nqos/scenarios"
)

// window is the rate-series window of the report charts and the
// policing floors.
const window = 100 * time.Millisecond

// running is a group of flows with one uplink capture per sending node.
type running struct {
	e    *testbedEnv
	runs []harness.FlowRun
	caps map[string]*live.Capture // by pcap path
	errs []error                  // per run: the sender's error
	// unresolved (per run) says how a flow expected undelivered failed
	// to resolve its peer; such a run sends nothing.
	unresolved []string
	notes      [][]string     // per run: what its sender retried, for the report
	closer     []func() error // iperf3 servers started in VMs
	wg         sync.WaitGroup
	cancel     context.CancelFunc
}

// Start waits until every chassis has installed the flows for the NB as
// it is now (a wait step sees rows, not flows), then starts one capture
// per sending node, waits until each sees its probe, then starts every
// flow's sender.
func (e *testbedEnv) Start(ctx context.Context, runs []harness.FlowRun) (harness.Running, error) {
	if err := e.tb.WaitHVSync(ctx); err != nil {
		return nil, fmt.Errorf("flows %s: %w", flowNames(runs), err)
	}
	unresolved, err := e.resolvePeers(ctx, runs)
	if err != nil {
		return nil, err
	}
	r := &running{e: e, runs: runs, caps: map[string]*live.Capture{}, errs: make([]error, len(runs)), unresolved: unresolved, notes: make([][]string, len(runs))}
	for _, run := range runs {
		if r.caps[run.Pcap] != nil {
			continue
		}
		netns, ifname, err := e.tb.UplinkCapturePoint(e.nodeName(run.Node))
		if err == nil {
			r.caps[run.Pcap], err = live.Start(ctx, live.Options{Netns: netns, Interface: ifname, PcapPath: run.Pcap})
		}
		if err != nil {
			closeCaptures(r.caps)
			return nil, fmt.Errorf("capture node %d uplink for flow %s: %w", run.Node, run.Name, err)
		}
	}
	senders := make([]func(context.Context) error, len(runs))
	for i, run := range runs {
		if unresolved[i] != "" {
			senders[i] = func(context.Context) error { return nil }
			continue
		}
		send, err := e.sender(ctx, r, i, run)
		if err != nil {
			closeCaptures(r.caps)
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

func flowNames(runs []harness.FlowRun) string {
	names := make([]string, len(runs))
	for i, r := range runs {
		names[i] = r.Name
	}
	return strings.Join(names, ", ")
}

// resolvePeers waits until the sender of every VM-to-VM flow has
// resolved its peer (awaitNeighbour), before any capture starts. A flow
// expected undelivered waits unresolvedTimeout; when its peer does not
// resolve, its entry in the result says so and the flow sends nothing
// (resolving is what its verdict then fails on).
// A VM-to-host flow instead has its sender re-resolve the host when it
// knows it already (refreshHost).
func (e *testbedEnv) resolvePeers(ctx context.Context, runs []harness.FlowRun) ([]string, error) {
	unresolved := make([]string, len(runs))
	refreshed := map[string]bool{}
	for i, run := range runs {
		if run.Tool == scenarios.ToolPackets {
			continue
		}
		vm := e.sc.VM(run.Spec.From)
		in, err := e.vms.Get(vm.Namespace, vm.Name)
		if err != nil {
			return nil, fmt.Errorf("flow %s: %w", run.Name, err)
		}
		if e.sc.VM(run.Spec.To) == nil {
			key := in.Netns + " " + in.NICs[run.FromNIC] + " " + run.Spec.DstIP.String()
			if !refreshed[key] {
				if err := refreshHost(ctx, in.Netns, in.NICs[run.FromNIC], run.Spec.SrcIP, run.Spec.DstIP); err != nil {
					return nil, fmt.Errorf("flow %s: %w", run.Name, err)
				}
				refreshed[key] = true
			}
			continue
		}
		timeout := neighbourTimeout
		if run.Expect.Undelivered {
			timeout = unresolvedTimeout
		}
		err = awaitNeighbour(ctx, in.Netns, in.NICs[run.FromNIC], run.Spec.SrcIP, run.Spec.DstIP, timeout, 200*time.Millisecond)
		switch {
		case err != nil && run.Expect.Undelivered && errors.Is(err, poll.ErrTimeout):
			unresolved[i] = err.Error()
		case err != nil:
			return nil, fmt.Errorf("flow %s: %w", run.Name, err)
		}
	}
	return unresolved, nil
}

// closeCaptures closes every capture (a nil one is a failed start).
func closeCaptures(caps map[string]*live.Capture) {
	for _, c := range caps {
		if c != nil {
			_ = c.Close()
		}
	}
}

func (r *running) closeServers() {
	for _, c := range r.closer {
		_ = c()
	}
}

// sender prepares one flow's traffic source in its VM's guest.
func (e *testbedEnv) sender(ctx context.Context, r *running, i int, run harness.FlowRun) (func(context.Context) error, error) {
	vm := e.sc.VM(run.Spec.From)
	in, err := e.vms.Get(vm.Namespace, vm.Name)
	if err != nil {
		return nil, fmt.Errorf("flow %s: %w", run.Name, err)
	}
	wire := run.Spec
	wire.VLAN = 0 // the guest sends untagged; OVN's localnet port tags
	if run.Tool == scenarios.ToolPackets {
		return e.injector(ctx, run, wire, in.Netns, in.NICs[run.FromNIC])
	}
	restart := func(context.Context) error { return nil } // a host's server outlives a test
	if peer := e.sc.VM(run.Spec.To); peer != nil {
		pin, err := e.vms.Get(peer.Namespace, peer.Name)
		if err != nil {
			return nil, fmt.Errorf("flow %s: %w", run.Name, err)
		}
		var srv *traffic.Server
		restart = func(ctx context.Context) error {
			if srv != nil {
				_ = srv.Close()
			}
			var err error
			if srv, err = traffic.IperfServer(ctx, pin.Netns, wire.DstIP, wire.DstPort); err != nil {
				return fmt.Errorf("flow %s: iperf3 server in %s: %w", run.Name, peer.Name, err)
			}
			return nil
		}
		if err := restart(ctx); err != nil {
			return nil, err
		}
		r.closer = append(r.closer, func() error { return srv.Close() }) // runs after the sender returned
	}
	return func(ctx context.Context) error {
		for attempt := 1; ; attempt++ {
			_, err := traffic.IperfClient(ctx, in.Netns, wire, traffic.IperfOptions{Handshake: handshakeTimeout})
			if !errors.Is(err, traffic.ErrHandshake) || attempt == handshakeAttempts {
				return err
			}
			r.notes[i] = append(r.notes[i], fmt.Sprintf("attempt %d: %v; the client and server were restarted", attempt, err))
			if err := restart(ctx); err != nil {
				return err
			}
		}
	}, nil
}

// handshakeTimeout is how long iperf3's UDP handshake datagram may stay
// unanswered (traffic.IperfOptions.Handshake); handshakeAttempts is how
// often a flow whose handshake was lost is started. Under CPU load the
// userspace datapath drops the odd frame, and iperf3 3.12 never resends
// its handshake.
const (
	handshakeTimeout  = 3 * time.Second
	handshakeAttempts = 2
)

// injector sends raw sequence-numbered frames from the guest NIC to the
// destination's MAC.
func (e *testbedEnv) injector(ctx context.Context, run harness.FlowRun, wire flow.Spec, netns, nic string) (func(context.Context) error, error) {
	src, err := e.tb.LinkMAC(netns, nic)
	if err != nil {
		return nil, fmt.Errorf("flow %s: %w", run.Name, err)
	}
	dstNetns, dstIf, err := e.nextHop(run.Spec.To, run.ToNIC)
	if err != nil {
		return nil, fmt.Errorf("flow %s: %w", run.Name, err)
	}
	dst, err := e.tb.LinkMAC(dstNetns, dstIf)
	if err != nil {
		return nil, fmt.Errorf("flow %s: %w", run.Name, err)
	}
	raw := traffic.RawSpec{Flow: wire, SrcMAC: src, DstMAC: dst, PayloadSize: run.Payload}
	return func(ctx context.Context) error {
		_, err := traffic.Inject(ctx, netns, nic, raw)
		return err
	}, nil
}

// nextHop is where frames to a VM's NIC or a host go on the VLAN: the
// endpoint itself, or for a host behind a router the router's VLAN port.
func (e *testbedEnv) nextHop(name string, nic int) (netns, ifname string, err error) {
	if h, ok := e.tb.Host(name); ok && h.Router != "" {
		r, ok := e.tb.Router(h.Router)
		if !ok {
			return "", "", fmt.Errorf("host %s: no router %q on the testbed", name, h.Router)
		}
		return r.Netns, r.Ifname, nil
	}
	return e.endpoint(name, nic)
}

// endpoint is the namespace and interface of a VM's NIC nic or a host's
// port.
func (e *testbedEnv) endpoint(name string, nic int) (netns, ifname string, err error) {
	if vm := e.sc.VM(name); vm != nil {
		in, err := e.vms.Get(vm.Namespace, vm.Name)
		if err != nil {
			return "", "", err
		}
		if nic >= len(in.NICs) {
			return "", "", fmt.Errorf("VM %s/%s has %d NICs, not NIC %d", vm.Namespace, vm.Name, len(in.NICs), nic)
		}
		return in.Netns, in.NICs[nic], nil
	}
	h, ok := e.tb.Host(name)
	if !ok {
		return "", "", fmt.Errorf("no VM or host %q on the testbed", name)
	}
	return h.Netns, h.Ifname, nil
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
	for i := range out {
		out[i].SendErr, out[i].Unresolved, out[i].Notes = r.errs[i], r.unresolved[i], r.notes[i]
	}
	var errs []error
	for _, path := range slices.Sorted(maps.Keys(r.caps)) { // errors in a stable order
		c := r.caps[path]
		stats, err := c.Stop() // Stop releases everything Close would
		if err != nil {
			errs = append(errs, fmt.Errorf("capture %s: %w", path, err))
			continue
		}
		if err := r.analyze(path, stats, out); err != nil {
			errs = append(errs, err)
		}
	}
	return out, errors.Join(errs...)
}

// analyze analyses one node's capture and fills the measurements of the
// runs it holds: the whole analysis, and each flow with its meter's token
// bucket.
func (r *running) analyze(path string, stats live.Stats, out []harness.Measured) error {
	var idx []int
	var specs []flow.Spec
	expect := map[string]flow.Expect{}
	for i, run := range r.runs {
		if run.Pcap == path {
			idx = append(idx, i)
			specs = append(specs, run.Spec)
			expect[run.Spec.Name] = run.Expect
		}
	}
	a, err := capture.AnalyzeFile(path, specs, capture.AnalyzeOptions{Ready: stats.Ready, Windows: []time.Duration{window}, Expect: expect})
	if err != nil {
		return err
	}
	for _, i := range idx {
		run := r.runs[i]
		var meter *capture.Bucket
		if run.Expect.Policed() {
			meter = a.Bucket(run.Expect.MeterKey(run.Spec.Name))
		}
		out[i] = harness.Measure(a.Flow(run.Spec.Name), meter, r.errs[i])
		out[i].Capture, out[i].Unresolved, out[i].Notes = a, r.unresolved[i], r.notes[i]
	}
	return nil
}
