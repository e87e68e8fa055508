package localnetenv

import (
	"context"
	"fmt"

	"github.com/nqos/nqos/harness/lifeprobe"
	"github.com/nqos/nqos/harness/results"
	"github.com/nqos/nqos/kubevirt"
	"github.com/nqos/nqos/scenarios"
)

// guestSpec describes a VM under a step's probe for the VM operations.
func guestSpec(vm *scenarios.VM, p *scenarios.Probe) guestOp {
	return guestOp{VM: vmID{Namespace: vm.Namespace, Name: vm.Name},
		Object: objectRef{Namespace: p.Manifest.Namespace, Name: p.Manifest.Name},
		DSCP:   p.DSCP, Traffic: probeTraffic{Peer: p.Peer}}
}

// Migrate live-migrates the VM (vm_migrate.go: probes both ways,
// both nodes' uplinks watched).
func (e *testbedEnv) Migrate(ctx context.Context, vm *scenarios.VM, m *scenarios.Migrate, p *scenarios.Probe) (lifeprobe.Outcome, error) {
	target := e.nodeName(m.To)
	mode, note, err := e.migrationMode(vm, target, kubevirt.MigrationMode(m.Mode))
	if err != nil {
		return lifeprobe.Outcome{}, err
	}
	res, err := e.life.Migrate(ctx, migrateSpec{guestOp: guestSpec(vm, p), Target: target, Mode: mode, LateTargetLSP: m.LateTargetLSP})
	if err != nil {
		return lifeprobe.Outcome{}, err
	}
	lr := res.Outcome()
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
func (e *testbedEnv) RestartLauncher(ctx context.Context, vm *scenarios.VM, p *scenarios.Probe) (lifeprobe.Outcome, error) {
	res, err := e.life.RestartLauncher(ctx, guestSpec(vm, p))
	if err != nil {
		return lifeprobe.Outcome{}, err
	}
	return res.Outcome(), nil
}

// ChangeGuestIP changes the guest's address (vm_restart.go).
func (e *testbedEnv) ChangeGuestIP(ctx context.Context, vm *scenarios.VM, v4 string, p *scenarios.Probe) (lifeprobe.Outcome, error) {
	res, err := e.life.ChangeGuestIP(ctx, guestSpec(vm, p), v4)
	if err != nil {
		return lifeprobe.Outcome{}, err
	}
	return res.Outcome(), nil
}
