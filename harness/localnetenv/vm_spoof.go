package localnetenv

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"time"

	"github.com/nqos/nqos/capture/live"
	"github.com/nqos/nqos/flow"
	"github.com/nqos/nqos/harness/lifeprobe"
	"github.com/nqos/nqos/harness/traffic"
	"github.com/nqos/nqos/harness/verdict"
	"github.com/nqos/nqos/scenarios"
)

// spooferMeter is the meter of the spoofer's class.
const spooferMeter = "spoofer-class"

// spoofFlow is one planned injection.
type spoofFlow struct {
	from   vmID
	netns  string
	nic    string
	node   string
	srcMAC net.HardwareAddr
	raw    traffic.RawSpec
	wire   flow.Spec    // the flow as captured on the uplink (tagged)
	expect *flow.Expect // nil: judged apart (may be dropped)
}

// Spoof injects raw frames from the spoofer's guest (scenario
// 12-spoofing), one flow after the other: the spoofer's own frames,
// frames with the victim's (sp.As) IP, frames with the victim's IP and
// MAC, and the victim's own frames (control). It captures the uplinks of
// both VMs' nodes into <scenario dir>/spoof-<vm>/ and classifies what
// arrived: the spoofer's class has DSCP sp.DSCP and a meter (sp.RateKbps,
// sp.BurstKbit), the victim's class sp.AsDSCP.
func (e *testbedEnv) Spoof(ctx context.Context, sp *scenarios.Spoof) (lifeprobe.Spoofing, error) {
	spoofer, victim := e.sc.VM(sp.VM), e.sc.VM(sp.As)
	var res lifeprobe.Spoofing
	fail := func(err error) (lifeprobe.Spoofing, error) {
		return lifeprobe.Spoofing{}, fmt.Errorf("spoofing by VM %s as %s: %w", vmRef(spoofer), vmRef(victim), err)
	}
	if e.dir == "" {
		return fail(fmt.Errorf("the scenario's Dir is required (the uplink captures go under it)"))
	}
	dir := filepath.Join(e.dir, "spoof-"+sp.VM)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return lifeprobe.Spoofing{}, fmt.Errorf("spoof capture directory: %w", err)
	}
	plan, err := e.planSpoof(ctx, sp, spoofer, victim)
	if err != nil {
		return fail(err)
	}
	caps, err := e.startCaptures(ctx, plan, dir)
	if err != nil {
		return fail(err)
	}
	defer closeCaptures(caps)
	start := time.Now()
	reports := map[string]traffic.InjectReport{}
	for _, f := range plan {
		rep, err := traffic.Inject(ctx, f.netns, f.nic, f.raw)
		if err != nil {
			return fail(err)
		}
		reports[f.raw.Flow.Name] = rep
	}
	for node, c := range caps {
		if _, err := c.Stop(); err != nil {
			return fail(fmt.Errorf("capture on %s: %w", node, err))
		}
		res.Pcaps = append(res.Pcaps, c.PcapPath())
	}
	if err := analyzeSpoof(&res, plan, caps, reports, sp, start); err != nil {
		return fail(err)
	}
	return res, nil
}

// planSpoof builds the four flows: scenarios.SpoofPPS frames per spoofer
// flow at scenarios.SpoofPPS with scenarios.SpoofPayload UDP bytes
// (about 25 Mbit/s for 1 s), a tenth of that for the control.
func (e *testbedEnv) planSpoof(ctx context.Context, sp *scenarios.Spoof, spoofer, victim *scenarios.VM) ([]spoofFlow, error) {
	peer, peerIP, err := e.host(sp.Peer)
	if err != nil {
		return nil, err
	}
	peerMAC, err := e.tb.LinkMAC(peer.Netns, peer.Ifname)
	if err != nil {
		return nil, err
	}
	mk := func(vm vmID) (spoofFlow, netip.Addr, error) {
		in, ip, err := e.instance(vm)
		if err != nil {
			return spoofFlow{}, ip, err
		}
		mac, err := e.tb.LinkMAC(in.Netns, in.NICs[0])
		return spoofFlow{from: vm, netns: in.Netns, nic: in.NICs[0], node: in.Node, srcMAC: mac}, ip, err
	}
	spf, spIP, err := mk(vmRef(spoofer))
	if err != nil {
		return nil, err
	}
	vi, viIP, err := mk(vmRef(victim))
	if err != nil {
		return nil, err
	}
	own := &flow.Expect{DSCP: flow.DSCPValue(sp.DSCP), MaxRateKbps: uint64(sp.RateKbps), BurstKbits: uint64(sp.BurstKbit), Meter: spooferMeter}
	asVictim := &flow.Expect{DSCP: flow.DSCPValue(sp.AsDSCP)}
	const frames, pps = scenarios.SpoofPPS, scenarios.SpoofPPS
	vlan := e.sc.Network(spoofer.Network).VLAN
	type row struct {
		name   string
		base   spoofFlow
		ip     netip.Addr
		mac    net.HardwareAddr
		frames uint64
		pps    float64
		expect *flow.Expect
	}
	rows := []row{
		{verdict.SpoofOwn, spf, spIP, spf.srcMAC, frames, pps, own},
		{verdict.SpoofForgedIP, spf, viIP, spf.srcMAC, frames, pps, own},
		{verdict.SpoofForgedMAC, spf, viIP, vi.srcMAC, frames, pps, nil},
		{verdict.SpoofControl, vi, viIP, vi.srcMAC, frames / 10, pps / 10, asVictim},
	}
	var plan []spoofFlow
	for i, r := range rows {
		f := r.base
		f.srcMAC, f.expect = r.mac, r.expect
		fs := flow.Spec{Name: r.name, From: r.base.from.Name, To: sp.Peer, SrcIP: r.ip, DstIP: peerIP,
			Protocol: flow.UDP, SrcPort: uint16(7301 + i), DstPort: 9, VLAN: vlan,
			Duration: time.Duration(float64(r.frames) / r.pps * float64(time.Second))}
		f.raw = traffic.RawSpec{Flow: fs, SrcMAC: r.mac, DstMAC: peerMAC, Count: r.frames, PPS: r.pps, PayloadSize: scenarios.SpoofPayload}
		f.raw.Flow.VLAN = 0 // the guest sends untagged; the localnet port tags
		f.raw.Flow.Rate = uint64(r.pps * float64(8*(14+20+8+scenarios.SpoofPayload)))
		f.wire = fs
		f.wire.Rate = f.raw.Flow.Rate
		plan = append(plan, f)
	}
	return plan, nil
}

func (e *testbedEnv) startCaptures(ctx context.Context, plan []spoofFlow, dir string) (map[string]*live.Capture, error) {
	caps := map[string]*live.Capture{}
	for _, f := range plan {
		if caps[f.node] != nil {
			continue
		}
		ns, ifname, err := e.tb.UplinkCapturePoint(f.node)
		if err == nil {
			caps[f.node], err = live.Start(ctx, live.Options{Netns: ns, Interface: ifname,
				PcapPath: filepath.Join(dir, "uplink-"+f.node+".pcap")})
		}
		if err != nil {
			closeCaptures(caps)
			return nil, fmt.Errorf("capture uplink of %s: %w", f.node, err)
		}
	}
	return caps, nil
}
