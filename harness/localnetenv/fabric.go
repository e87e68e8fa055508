package localnetenv

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/nqos/nqos/capture"
	"github.com/nqos/nqos/capture/live"
	"github.com/nqos/nqos/flow"
	"github.com/nqos/nqos/harness"
	"github.com/nqos/nqos/internal/netns"
	"github.com/nqos/nqos/internal/tc"
	tckernel "github.com/nqos/nqos/internal/tc/kernel"
	"github.com/nqos/nqos/scenarios"
)

var _ harness.Fabric = (*testbedEnv)(nil)

// fabricEnv is what the fabric steps installed on the testbed.
type fabricEnv struct {
	shapers   map[string]*tckernel.Shaper // by "netns/ifname"
	untrusted map[int]bool                // node index -> trust boundary set
}

// port is the namespace and link of a shaped port (for a host, the
// fabric's queueing port towards it).
func (e *testbedEnv) port(ctx context.Context, p scenarios.Port) (ns, ifname string, err error) {
	if p.Uplink != nil {
		if *p.Uplink < 0 || *p.Uplink >= len(e.tb.Nodes()) {
			return "", "", fmt.Errorf("no node %d", *p.Uplink)
		}
		return e.tb.UplinkNodeSide(e.nodeName(*p.Uplink))
	}
	return e.tb.HostQueuePort(ctx, p.Host)
}

// ShapeEgress installs (or with h nil removes) an HTB hierarchy on the
// port's egress through package tc/kernel.
func (e *testbedEnv) ShapeEgress(ctx context.Context, p scenarios.Port, h *tc.HTB) error {
	ns, dev, err := e.port(ctx, p)
	if err != nil {
		return fmt.Errorf("shape egress: %w", err)
	}
	key := ns + "/" + dev
	if old := e.fab.shapers[key]; old != nil {
		delete(e.fab.shapers, key)
		if err := old.Close(); err != nil {
			return err
		}
	}
	if h == nil {
		return nil
	}
	s, err := tckernel.Install(netns.Named(ns), dev, *h)
	if err != nil {
		return err
	}
	if e.fab.shapers == nil {
		e.fab.shapers = map[string]*tckernel.Shaper{}
	}
	e.fab.shapers[key] = s
	return nil
}

// EgressStats reads the class counters of the hierarchy on a port.
func (e *testbedEnv) EgressStats(ctx context.Context, p scenarios.Port) ([]tc.ClassStats, error) {
	ns, dev, err := e.port(ctx, p)
	if err != nil {
		return nil, fmt.Errorf("egress stats: %w", err)
	}
	s := e.fab.shapers[ns+"/"+dev]
	if s == nil {
		return nil, fmt.Errorf("egress stats: no hierarchy on %s/%s", ns, dev)
	}
	return s.Stats()
}

// SetTrustBoundary sets or clears the fabric's DSCP rewrite on a node's
// uplink.
func (e *testbedEnv) SetTrustBoundary(ctx context.Context, node int, untrusted bool) error {
	if node < 0 || node >= len(e.tb.Nodes()) {
		return fmt.Errorf("trust boundary: no node %d", node)
	}
	if err := e.tb.SetTrustBoundary(ctx, e.nodeName(node), untrusted); err != nil {
		return err
	}
	if e.fab.untrusted == nil {
		e.fab.untrusted = map[int]bool{}
	}
	e.fab.untrusted[node] = untrusted
	return nil
}

// ClearFabric removes every hierarchy and trust boundary still set.
func (e *testbedEnv) ClearFabric(ctx context.Context) error {
	var errs []error
	for _, k := range slices.Sorted(maps.Keys(e.fab.shapers)) {
		errs = append(errs, e.fab.shapers[k].Close())
		delete(e.fab.shapers, k)
	}
	for _, n := range slices.Sorted(maps.Keys(e.fab.untrusted)) {
		if e.fab.untrusted[n] {
			errs = append(errs, e.tb.SetTrustBoundary(ctx, e.nodeName(n), false))
		}
		delete(e.fab.untrusted, n)
	}
	return errors.Join(errs...)
}

// delivery is the destination captures of one measure step.
type delivery struct {
	caps map[string]*live.Capture // by destination
	pcap map[string]string
}

// WatchDelivery starts one capture per destination: a VM's guest NIC or
// an external host's port.
func (e *testbedEnv) WatchDelivery(ctx context.Context, dests []string, pcap func(string) string) (harness.Delivery, error) {
	d := &delivery{caps: map[string]*live.Capture{}, pcap: map[string]string{}}
	for _, dest := range dests {
		ns, ifname, err := e.endpoint(dest, 0) // a VM's first NIC
		if err == nil {
			d.pcap[dest] = pcap(dest)
			d.caps[dest], err = live.Start(ctx, live.Options{Netns: ns, Interface: ifname, PcapPath: d.pcap[dest]})
		}
		if err != nil {
			closeCaptures(d.caps)
			return nil, fmt.Errorf("capture at destination %s: %w", dest, err)
		}
	}
	return d, nil
}

// Finish stops every capture and analyses each with the specs sent to
// its destination.
func (d *delivery) Finish(_ context.Context, specs map[string][]flow.Spec) (map[string]harness.Measured, error) {
	out := map[string]harness.Measured{}
	var errs []error
	for _, dest := range slices.Sorted(maps.Keys(d.caps)) {
		stats, err := d.caps[dest].Stop()
		if err != nil {
			errs = append(errs, fmt.Errorf("capture at %s: %w", dest, err))
			continue
		}
		a, err := capture.AnalyzeFile(d.pcap[dest], specs[dest], capture.AnalyzeOptions{Ready: stats.Ready, Windows: []time.Duration{window}})
		if err != nil {
			errs = append(errs, err)
			continue
		}
		for _, s := range specs[dest] {
			out[s.Name] = harness.Measure(a.Flow(s.Name), nil, nil)
		}
	}
	return out, errors.Join(errs...)
}
