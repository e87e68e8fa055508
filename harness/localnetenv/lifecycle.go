package localnetenv

import (
	"context"
	"fmt"
	"net/netip"
	"strings"
	"time"

	"github.com/nqos/nqos/harness"
	"github.com/nqos/nqos/harness/results"
	"github.com/nqos/nqos/kubevirt"
	"github.com/nqos/nqos/scenarios"
	"github.com/nqos/nqos/topo/localnet"
)

// guestSpec is the vmlife description of a VM under a step's probe.
func guestSpec(vm *scenarios.VM, p *scenarios.Probe) GuestSpec {
	return GuestSpec{VM: VMRef{Namespace: vm.Namespace, Name: vm.Name},
		Object: ObjectRef{Namespace: p.Manifest.Namespace, Name: p.Manifest.Name},
		DSCP:   p.DSCP, Traffic: Traffic{Peer: p.Peer}}
}

func measure(name string, d time.Duration) results.Measure {
	return results.Measure{Name: name, Duration: d}
}

func counted(name string, n int, unit string) results.Measure {
	return results.Measure{Name: name, Count: n, Unit: unit}
}

// Migrate live-migrates the VM with package vmlife (probes both ways,
// both nodes' uplinks watched).
func (e *Env) Migrate(ctx context.Context, vm *scenarios.VM, m *scenarios.Migrate, p *scenarios.Probe) (harness.LifeResult, error) {
	g := guestSpec(vm, p)
	res, err := e.life.Migrate(ctx, MigrateSpec{VM: g.VM, Target: e.nodeName(m.To), Mode: kubevirt.MigrationMode(m.Mode),
		LateTargetLSP: m.LateTargetLSP, Object: g.Object, DSCP: p.DSCP, Traffic: g.Traffic})
	if err != nil {
		return harness.LifeResult{}, err
	}
	return harness.LifeResult{
		Packets: res.Marking.Packets, Unmarked: res.Marking.Unmarked,
		Lost: map[string]int{harness.Out: res.Out.Lost, harness.In: res.In.Lost},
		Sent: map[string]int{harness.Out: res.Out.Sent, harness.In: res.In.Sent},
		Measures: append([]results.Measure{
			measure("target prepared (pod, LSP, port bound)", res.Report.Prepared),
			measure("target LSP in its port group, relative to the switch", res.TargetInGroup),
			measure("switch → first marked packet on the target uplink", res.FirstMarkedOnTarget),
			measure("longest gap guest → peer", res.Out.LongestGap),
			measure("longest gap peer → guest", res.In.LongestGap),
			counted("probe packets seen on the uplinks", res.Marking.Packets, "packets"),
			counted("probe packets unmarked", res.Marking.Unmarked, "packets"),
			counted("probe datagrams lost guest → peer", res.Out.Lost, "datagrams"),
			counted("probe datagrams lost peer → guest", res.In.Lost, "datagrams"),
		}, append(lateMeasures(res), handoverMeasures(res.Phases, res.Report)...)...),
		Detail: res,
	}, nil
}

// lateMeasures are the figures of a VM migrated in after its NetworkQoS
// (its target LSP created after the switch): the controller has to find
// a port it has never seen, as for a VM that starts after its policy.
func lateMeasures(res MigrateResult) []results.Measure {
	if !res.Late {
		return nil
	}
	return []results.Measure{
		measure("switch → target LSP created (late)", res.TargetLSPInNB),
		measure("switch → target LSP in its port group", res.TargetInGroup),
		measure("target LSP created → first marked packet on the target uplink", res.LSPToMarked),
		counted("probe packets unmarked on the target after the switch", res.OnTarget.Unmarked, "packets"),
	}
}

// handoverMeasures are the multi-chassis figures per phase: the switch
// (guest moved, binding settled on the target) and the handover of the
// LSP to the target pod (renamed in place, VIF re-pointed).
func handoverMeasures(ph *MigratePhases, rep kubevirt.MigrationReport) []results.Measure {
	if ph == nil {
		return nil
	}
	return []results.Measure{
		measure("handover: LSP renamed to the target pod's port → bound there with flows", rep.Handover),
		measure("handover: port in its port group under the new name, after the handover began", ph.NameInGroup),
		counted("switch: probe datagrams lost guest → peer", ph.Switch.Out.Lost, "datagrams"),
		counted("switch: probe datagrams lost peer → guest", ph.Switch.In.Lost, "datagrams"),
		counted("switch: probe packets unmarked", ph.Switch.Marking.Unmarked, "packets"),
		counted("handover: probe datagrams lost guest → peer", ph.Handover.Out.Lost, "datagrams"),
		counted("handover: probe datagrams lost peer → guest", ph.Handover.In.Lost, "datagrams"),
		counted("handover: probe packets unmarked", ph.Handover.Marking.Unmarked, "packets"),
	}
}

// RestartLauncher recreates the VM's launcher pod with package
func (e *Env) RestartLauncher(ctx context.Context, vm *scenarios.VM, p *scenarios.Probe) (harness.LifeResult, error) {
	res, err := e.life.RestartLauncher(ctx, guestSpec(vm, p))
	if err != nil {
		return harness.LifeResult{}, err
	}
	return harness.LifeResult{
		Packets: res.Marking.Packets, Unmarked: res.Marking.Unmarked,
		Lost: map[string]int{harness.Out: res.Out.Lost}, Sent: map[string]int{harness.Out: res.Out.Sent},
		Measures: []results.Measure{
			measure("launcher restart (new LSP up)", res.Restart),
			measure("new LSP in its port group", res.NewInGroup),
			measure("old LSP out of its port group", res.OldOutOfGroup),
			measure("longest gap guest → peer", res.Out.LongestGap),
			counted("probe packets unmarked", res.Marking.Unmarked, "packets"),
			counted("probe datagrams lost guest → peer", res.Out.Lost, "datagrams"),
		},
		Detail: res,
	}, nil
}

// ChangeGuestIP changes the guest's address with package
func (e *Env) ChangeGuestIP(ctx context.Context, vm *scenarios.VM, v4 string, p *scenarios.Probe) (harness.LifeResult, error) {
	res, err := e.life.ChangeGuestIP(ctx, guestSpec(vm, p), v4)
	if err != nil {
		return harness.LifeResult{}, err
	}
	unmarked := res.Before.Unmarked + res.After.Unmarked
	lost := res.OutBefore.Lost + res.OutAfter.Lost
	return harness.LifeResult{
		Packets: res.Before.Packets + res.After.Packets, Unmarked: unmarked,
		Lost: map[string]int{harness.Out: lost}, Sent: map[string]int{harness.Out: res.OutBefore.Sent + res.OutAfter.Sent},
		Measures: []results.Measure{
			counted("probe packets from the old address", res.Before.Packets, "packets"),
			counted("probe packets from the new address", res.After.Packets, "packets"),
			counted("probe packets unmarked", unmarked, "packets"),
			counted("probe datagrams lost guest → peer", lost, "datagrams"),
		},
		Detail: res,
	}, nil
}

// probePort is the UDP port of a restartDaemon step's probe stream.
const probePort = 7300

// daemonNames maps a scenario daemon to the testbed's name.
var daemonNames = map[string]string{
	scenarios.DaemonOVNController: localnet.DaemonOVNController,
	scenarios.DaemonVSwitchd:      localnet.DaemonVSwitchd,
	scenarios.DaemonNB:            localnet.DaemonNB,
}

// RestartDaemon restarts a daemon with package cplife while the VM sends
// a marked UDP stream (500/s) to the peer, watched on its node's uplink.
func (e *Env) RestartDaemon(ctx context.Context, r *scenarios.RestartDaemon, vm *scenarios.VM, p *scenarios.Probe) (harness.LifeResult, error) {
	s, err := e.probeStream(ctx, vm, p)
	if err != nil {
		return harness.LifeResult{}, err
	}
	res, err := RestartDaemonUnderTraffic(ctx, e.tb, DaemonRestartSpec{Node: e.nodeName(r.Node),
		Daemon: daemonNames[r.Daemon], Mode: localnet.RestartMode(r.Mode), Marked: s})
	sr := s.Stop()
	if err != nil {
		return harness.LifeResult{}, err
	}
	return harness.LifeResult{
		Packets: res.Marks.Packets, Unmarked: res.Marks.Unmarked, Gap: res.Marks.Gap,
		Lost: map[string]int{harness.Out: sr.Lost}, Sent: map[string]int{harness.Out: sr.Sent},
		Measures: []results.Measure{
			measure("restart (stop + start)", res.Restart),
			measure("restart → steady marking again", res.Recovered),
			measure("marking gap (longest time without a marked packet)", res.Marks.Gap),
			counted("probe packets unmarked around the restart", res.Marks.Unmarked, "packets"),
			counted("probe datagrams lost over the whole stream", sr.Lost, "datagrams"),
		},
		Detail: map[string]any{"restart": res, "stream": sr},
	}, nil
}

// probeStream starts the VM's marked stream to the probe's peer.
func (e *Env) probeStream(ctx context.Context, vm *scenarios.VM, p *scenarios.Probe) (*Stream, error) {
	in, err := e.vms.Get(vm.Namespace, vm.Name)
	if err != nil {
		return nil, err
	}
	host, ok := e.tb.Host(p.Peer)
	if !ok || host.IPv4 == "" {
		return nil, fmt.Errorf("probe peer %s: no such host with an IPv4 address on the testbed", p.Peer)
	}
	wns, wif, err := e.tb.UplinkCapturePoint(in.Node)
	if err != nil {
		return nil, err
	}
	src, err := netip.ParsePrefix(vm.Addresses.V4)
	if err != nil {
		return nil, fmt.Errorf("VM %s: address %q: %w", vm.Name, vm.Addresses.V4, err)
	}
	dst, err := netip.ParseAddr(strings.Split(host.IPv4, "/")[0])
	if err != nil {
		return nil, fmt.Errorf("host %s: address %q: %w", p.Peer, host.IPv4, err)
	}
	return StartStream(ctx, StreamSpec{Name: vm.Name + "->" + p.Peer, SrcNetns: in.Netns,
		Src: netip.AddrPortFrom(src.Addr(), probePort), DstNetns: host.Netns, Dst: netip.AddrPortFrom(dst, probePort),
		DSCP: p.DSCP, WatchNetns: wns, WatchIf: wif})
}
