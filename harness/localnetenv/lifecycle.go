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

// guestSpec describes a VM under a step's probe for the VM operations.
func guestSpec(vm *scenarios.VM, p *scenarios.Probe) guestOp {
	return guestOp{VM: vmID{Namespace: vm.Namespace, Name: vm.Name},
		Object: objectRef{Namespace: p.Manifest.Namespace, Name: p.Manifest.Name},
		DSCP:   p.DSCP, Traffic: probeTraffic{Peer: p.Peer}}
}

func measure(name string, d time.Duration) results.Measure {
	return results.Measure{Name: name, Duration: d}
}

func counted(name string, n int, unit string) results.Measure {
	return results.Measure{Name: name, Count: n, Unit: unit}
}

// Migrate live-migrates the VM (vm_migrate.go: probes both ways,
// both nodes' uplinks watched).
func (e *testbedEnv) Migrate(ctx context.Context, vm *scenarios.VM, m *scenarios.Migrate, p *scenarios.Probe) (harness.LifeResult, error) {
	g := guestSpec(vm, p)
	target := e.nodeName(m.To)
	mode, note, err := e.migrationMode(vm, target, kubevirt.MigrationMode(m.Mode))
	if err != nil {
		return harness.LifeResult{}, err
	}
	res, err := e.life.Migrate(ctx, migrateSpec{VM: g.VM, Target: target, Mode: mode,
		LateTargetLSP: m.LateTargetLSP, Object: g.Object, DSCP: p.DSCP, Traffic: g.Traffic})
	if err != nil {
		return harness.LifeResult{}, err
	}
	lr := res.life()
	if note != "" {
		lr.Measures = append([]results.Measure{{Name: "migration mode", Note: note}}, lr.Measures...)
	}
	return lr, nil
}

// migrationMode is the mode a migration of vm to target runs in: the
// step's, except a multi-chassis migration between zones, which runs as
// ovnkube's interconnect runs every localnet migration: the target pod's
// own port in the target zone (per-pod-lsp), the source zone's port
// deleted with the source pod. One port cannot be in two Northbounds,
// so it cannot be bound on a chassis of each. note says so ("" else).
func (e *testbedEnv) migrationMode(vm *scenarios.VM, target string, mode kubevirt.MigrationMode) (kubevirt.MigrationMode, string, error) {
	if mode != kubevirt.MigrateMultiChassis {
		return mode, "", nil
	}
	src, err := e.zoneOfVM(vm.Namespace, vm.Name)
	if err != nil {
		return "", "", err
	}
	if src.zone.Has(target) {
		return mode, "", nil
	}
	return kubevirt.MigratePerPodLSP, fmt.Sprintf("%s across zones (%s to %s) runs as %s, as ovnkube on interconnect migrates a localnet VM: "+
		"a port cannot be bound in two zones' Northbounds", mode, src.zone.Name, target, kubevirt.MigratePerPodLSP), nil
}

// RestartLauncher recreates the VM's launcher pod (vm_restart.go).
func (e *testbedEnv) RestartLauncher(ctx context.Context, vm *scenarios.VM, p *scenarios.Probe) (harness.LifeResult, error) {
	res, err := e.life.RestartLauncher(ctx, guestSpec(vm, p))
	if err != nil {
		return harness.LifeResult{}, err
	}
	return res.life(), nil
}

// ChangeGuestIP changes the guest's address (vm_restart.go).
func (e *testbedEnv) ChangeGuestIP(ctx context.Context, vm *scenarios.VM, v4 string, p *scenarios.Probe) (harness.LifeResult, error) {
	res, err := e.life.ChangeGuestIP(ctx, guestSpec(vm, p), v4)
	if err != nil {
		return harness.LifeResult{}, err
	}
	return res.life(), nil
}

// probePort is the UDP port of a restartDaemon step's probe stream.
const probePort = 7300

// daemonNames maps a scenario daemon to the testbed's name.
var daemonNames = map[string]string{
	scenarios.DaemonOVNController: localnet.DaemonOVNController,
	scenarios.DaemonVSwitchd:      localnet.DaemonVSwitchd,
	scenarios.DaemonNB:            localnet.DaemonNB,
}

// RestartDaemon restarts a daemon (cp_daemon.go) while the VM sends
// a marked UDP stream (500/s) to the peer, watched on its node's uplink.
func (e *testbedEnv) RestartDaemon(ctx context.Context, r *scenarios.RestartDaemon, vm *scenarios.VM, p *scenarios.Probe) (harness.LifeResult, error) {
	s, err := e.probeStream(ctx, vm, p)
	if err != nil {
		return harness.LifeResult{}, err
	}
	res, err := restartDaemonUnderTraffic(ctx, e.tb, daemonRestartSpec{Node: e.nodeName(r.Node),
		Daemon: daemonNames[r.Daemon], Mode: localnet.RestartMode(r.Mode), Marked: s})
	sr := s.Stop()
	if err != nil {
		return harness.LifeResult{}, err
	}
	return res.life(sr), nil
}

// probeStream starts the VM's marked stream to the probe's peer.
func (e *testbedEnv) probeStream(ctx context.Context, vm *scenarios.VM, p *scenarios.Probe) (*markedStream, error) {
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
	return startStream(ctx, streamSpec{Name: vm.Name + "->" + p.Peer, SrcNetns: in.Netns,
		Src: netip.AddrPortFrom(src.Addr(), probePort), DstNetns: host.Netns, Dst: netip.AddrPortFrom(dst, probePort),
		DSCP: p.DSCP, WatchNetns: wns, WatchIf: wif})
}
