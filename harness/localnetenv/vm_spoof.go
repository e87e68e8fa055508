package localnetenv

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"path/filepath"
	"time"

	"github.com/nqos/nqos/capture/live"
	"github.com/nqos/nqos/flow"
	"github.com/nqos/nqos/harness/lifeprobe"
	"github.com/nqos/nqos/harness/traffic"
	"github.com/nqos/nqos/harness/verdict"
)

// spoofSpec is a guest sending raw frames with another VM's source IP and
// MAC (scenario 12-spoofing). The spoofer's class has DSCP SpooferDSCP and
// a meter (RateKbps, BurstKbits); the victim's class has VictimDSCP.
type spoofSpec struct {
	Spoofer     vmID   `json:"spoofer"`
	Victim      vmID   `json:"victim"`
	SpooferDSCP int    `json:"spooferDSCP"`
	VictimDSCP  int    `json:"victimDSCP"`
	RateKbps    uint64 `json:"rateKbps"`
	BurstKbits  uint64 `json:"burstKbits"`
	// Peer is the destination host; VLAN the network's tag on the uplink.
	Peer string `json:"peer"`
	VLAN int    `json:"vlan"`
	// Frames per spoofer flow (default 3000) at PPS (default 3000) with
	// Payload UDP bytes (default 1000): about 25 Mbit/s for 1 s.
	Frames  uint64  `json:"frames"`
	PPS     float64 `json:"pps"`
	Payload int     `json:"payload"`
	// Dir receives the uplink captures (required).
	Dir string `json:"dir"`
	// Judge overrides the verdicts' options (zero: package verdict's
	// defaults: 2 ms jitter, floor 0.9 of the rate).
	Judge verdict.Options `json:"-"`
}

// Spoof flow names.
const (
	flowSpooferOwn       = verdict.SpoofOwn       // spoofer's IP and MAC
	flowSpooferVictimIP  = verdict.SpoofForgedIP  // victim's IP, spoofer's MAC
	flowSpooferVictimMAC = verdict.SpoofForgedMAC // victim's IP and MAC
	flowVictimOwn        = verdict.SpoofControl   // control: the victim's own frames
	spooferMeter         = "spoofer-class"
)

func (s spoofSpec) withDefaults() spoofSpec {
	if s.Frames == 0 {
		s.Frames = 3000
	}
	if s.PPS == 0 {
		s.PPS = 3000
	}
	if s.Payload == 0 {
		s.Payload = 1000
	}
	return s
}

// spoofFlow is one planned injection.
type spoofFlow struct {
	from   vmID
	netns  string
	nic    string
	node   string
	srcMAC net.HardwareAddr
	raw    traffic.RawSpec
	expect *flow.Expect // nil: judged apart (may be dropped)
}

// Spoof injects, one after the other, the spoofer's own frames, frames
// with the victim's IP, frames with the victim's IP and MAC, and the
// victim's own frames (control), captures the uplinks of both VMs' nodes
// and classifies what arrived.
func (o *vmOps) Spoof(ctx context.Context, spec spoofSpec) (lifeprobe.Spoofing, error) {
	spec = spec.withDefaults()
	var res lifeprobe.Spoofing
	fail := func(err error) (lifeprobe.Spoofing, error) {
		return res, fmt.Errorf("spoofing by VM %s as %s: %w", spec.Spoofer, spec.Victim, err)
	}
	if spec.Dir == "" {
		return fail(fmt.Errorf("field Dir is required"))
	}
	plan, err := o.planSpoof(ctx, spec)
	if err != nil {
		return fail(err)
	}
	caps, err := o.startCaptures(ctx, plan, spec.Dir)
	if err != nil {
		return fail(err)
	}
	defer func() {
		for _, c := range caps {
			_ = c.Close()
		}
	}()
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
	if err := analyzeSpoof(&res, plan, caps, reports, spec, start); err != nil {
		return fail(err)
	}
	return res, nil
}

// planSpoof builds the four flows.
func (o *vmOps) planSpoof(ctx context.Context, spec spoofSpec) ([]spoofFlow, error) {
	peer, peerIP, err := o.host(spec.Peer)
	if err != nil {
		return nil, err
	}
	peerMAC, err := o.mac(ctx, peer.Netns, peer.Ifname)
	if err != nil {
		return nil, err
	}
	mk := func(vm vmID) (spoofFlow, netip.Addr, error) {
		in, ip, err := o.instance(vm)
		if err != nil {
			return spoofFlow{}, ip, err
		}
		mac, err := o.mac(ctx, in.Netns, in.NICs[0])
		return spoofFlow{from: vm, netns: in.Netns, nic: in.NICs[0], node: in.Node, srcMAC: mac}, ip, err
	}
	sp, spIP, err := mk(spec.Spoofer)
	if err != nil {
		return nil, err
	}
	vi, viIP, err := mk(spec.Victim)
	if err != nil {
		return nil, err
	}
	own := &flow.Expect{DSCP: flow.DSCPValue(spec.SpooferDSCP), MaxRateKbps: spec.RateKbps, BurstKbits: spec.BurstKbits, Meter: spooferMeter}
	victim := &flow.Expect{DSCP: flow.DSCPValue(spec.VictimDSCP)}
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
		{flowSpooferOwn, sp, spIP, sp.srcMAC, spec.Frames, spec.PPS, own},
		{flowSpooferVictimIP, sp, viIP, sp.srcMAC, spec.Frames, spec.PPS, own},
		{flowSpooferVictimMAC, sp, viIP, vi.srcMAC, spec.Frames, spec.PPS, nil},
		{flowVictimOwn, vi, viIP, vi.srcMAC, spec.Frames / 10, spec.PPS / 10, victim},
	}
	var plan []spoofFlow
	for i, r := range rows {
		f := r.base
		f.srcMAC, f.expect = r.mac, r.expect
		fs := flow.Spec{Name: r.name, From: r.base.from.Name, To: spec.Peer, SrcIP: r.ip, DstIP: peerIP,
			Protocol: flow.UDP, SrcPort: uint16(7301 + i), DstPort: 9, VLAN: spec.VLAN,
			Duration: time.Duration(float64(r.frames) / r.pps * float64(time.Second))}
		f.raw = traffic.RawSpec{Flow: fs, SrcMAC: r.mac, DstMAC: peerMAC, Count: r.frames, PPS: r.pps, PayloadSize: spec.Payload}
		f.raw.Flow.VLAN = 0 // the guest sends untagged; the localnet port tags
		f.raw.Flow.Rate = uint64(r.pps * float64(8*(14+20+8+spec.Payload)))
		plan = append(plan, f)
	}
	return plan, nil
}

// wireSpec is the flow as captured on the uplink (tagged).
func (f spoofFlow) wireSpec(vlan int) flow.Spec {
	s := f.raw.Flow
	s.VLAN = vlan
	return s
}

func (o *vmOps) startCaptures(ctx context.Context, plan []spoofFlow, dir string) (map[string]*live.Capture, error) {
	caps := map[string]*live.Capture{}
	for _, f := range plan {
		if caps[f.node] != nil {
			continue
		}
		ns, ifname, err := o.tb.UplinkCapturePoint(f.node)
		if err == nil {
			caps[f.node], err = live.Start(ctx, live.Options{Netns: ns, Interface: ifname,
				PcapPath: filepath.Join(dir, "uplink-"+f.node+".pcap")})
		}
		if err != nil {
			for _, c := range caps {
				_ = c.Close()
			}
			return nil, fmt.Errorf("capture uplink of %s: %w", f.node, err)
		}
	}
	return caps, nil
}
