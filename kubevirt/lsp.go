package kubevirt

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/nqos/nqos/internal/poll"
	"github.com/nqos/nqos/topo/localnet"
)

// lspWriter is who creates and removes the launcher pods' LSPs, as the
// testbed declares it (Testbed.LSPOwner): the manager standing in for
// ovnkube's pod handler (testbedLSPs), or ovnkube itself, which the
// manager waits for (ovnkubeLSPs).
type lspWriter interface {
	// create has the LSP lsp of pod's attachment a on chassis created.
	create(ctx context.Context, m *Manager, vm VM, pod string, a attachment, lsp, chassis string) error
	// remove has the LSP removed from the NB of node's zone.
	remove(ctx context.Context, m *Manager, vm VM, node, lsp string) error
	// podNetworks reports whether the manager writes the launcher pods'
	// k8s.ovn.org/pod-networks annotation (else ovnkube does).
	podNetworks() bool
	// assigned gives attachment i of a VM on a network with subnets the
	// addresses its pod got from the LSPs' writer.
	assigned(ctx context.Context, m *Manager, in *instance, i int) error
}

// testbedLSPs: the manager writes the LSPs and the pod-networks
// annotation as ovnkube would (the embedded testbed runs no ovnkube).
type testbedLSPs struct{}

func (testbedLSPs) podNetworks() bool { return true }

// assigned keeps the static addresses: they are what the manager wrote
// on the LSP and in pod-networks.
func (testbedLSPs) assigned(context.Context, *Manager, *instance, int) error { return nil }

// ovnkubeLSPs: ovnkube writes them; the manager waits and checks.
type ovnkubeLSPs struct{}

func (ovnkubeLSPs) podNetworks() bool { return false }

// lspWriterOf is the writer of the LSPs owner declares.
func lspWriterOf(owner localnet.LSPOwner) lspWriter {
	if owner == localnet.LSPsOVNKube {
		return ovnkubeLSPs{}
	}
	return testbedLSPs{}
}

// ovnkubeLSPTimeout bounds the wait for ovnkube to create a launcher
// pod's LSP, or to remove it after the pod is deleted.
const ovnkubeLSPTimeout = time.Minute

// CreateLSPs creates the LSPs of a VM created with SkipLSP and waits
// until they are up.
func (m *Manager) CreateLSPs(ctx context.Context, namespace, name string) error {
	return m.withVM(namespace, name, func(in *instance) error { return m.createLSPs(ctx, in, in.node, false) })
}

// createLSPs has the VM's LSPs created (lspWriter), then (unless noWait) waits until they are up.
func (m *Manager) createLSPs(ctx context.Context, in *instance, node string, noWait bool) error {
	for i, a := range in.atts {
		if err := m.lsps.create(ctx, m, in.vm, in.pod, a, in.lsps[i], node); err != nil {
			return err
		}
	}
	if noWait {
		return nil
	}
	for _, l := range in.lsps {
		if err := m.tb.WaitPortUp(ctx, l); err != nil {
			return fmt.Errorf("VM %s/%s: %w", in.vm.Namespace, in.vm.Name, err)
		}
	}
	return nil
}

// create writes a pod LSP as ovnkube does on a secondary network, in
// the NB of the zone of chassis (the pod's node): on interconnect only
// the zone of the pod's node has its LSP, as ovnkube's localnet
// controller creates ports for local pods only.
func (testbedLSPs) create(ctx context.Context, m *Manager, vm VM, _ string, a attachment, lsp, chassis string) error {
	addr := a.MAC
	for _, ip := range a.ovnIPs() {
		addr += " " + prefixAddr(ip)
	}
	args := []string{"--", "lsp-add", a.Switch, lsp,
		"--", "lsp-set-addresses", lsp, addr,
		"--", "lsp-set-port-security", lsp, addr,
		"--", "set", "Logical_Switch_Port", lsp, "options:requested-chassis=" + chassis}
	if _, err := m.tb.NodeNBCtl(ctx, chassis, append(args, lspExternalIDs(vm, a)...)...); err != nil {
		return fmt.Errorf("VM %s/%s: LSP %s: %w", vm.Namespace, vm.Name, lsp, err)
	}
	return nil
}

// create waits until ovnkube has created the LSP of pod's attachment a
// and checks that its addresses start with the MAC the networks
// annotation asked for and that it is requested on chassis.
func (ovnkubeLSPs) create(ctx context.Context, m *Manager, vm VM, pod string, a attachment, lsp, chassis string) error {
	what := fmt.Sprintf("ovnkube's LSP %s of pod %s/%s", lsp, vm.Namespace, pod)
	err := poll.Until(ctx, ovnkubeLSPTimeout, 100*time.Millisecond, what, func(ctx context.Context) (bool, error) {
		out, err := m.tb.NodeNBCtl(ctx, chassis, "--bare", "--columns=addresses,options", "find", "Logical_Switch_Port", "name="+lsp)
		if err != nil {
			return false, err
		}
		lines := strings.Split(strings.TrimSpace(out), "\n")
		if len(lines) < 2 || lines[0] == "" {
			return false, poll.Retry("not in the NB (find: %q)", out)
		}
		addr, opts := strings.Fields(lines[0]), lines[len(lines)-1]
		if !strings.EqualFold(addr[0], a.MAC) {
			return false, fmt.Errorf("addresses %q: MAC %s, the networks annotation asks %s", lines[0], addr[0], a.MAC)
		}
		if !strings.Contains(opts, "requested-chassis="+chassis) {
			return false, fmt.Errorf("options %q: not requested on chassis %s", opts, chassis)
		}
		return true, nil
	})
	if err != nil {
		return fmt.Errorf("VM %s/%s: %w", vm.Namespace, vm.Name, err)
	}
	return nil
}

// lspExternalIDs are the ovn-nbctl set arguments for the external_ids
// ovnkube writes on the LSP of a pod of vm on a secondary localnet network
// (upstream-networkqos-facts: namespace, pod, network, nad, topology).
func lspExternalIDs(vm VM, a attachment) []string {
	return []string{"external_ids:namespace=" + vm.Namespace, "external_ids:pod=true",
		"external_ids:k8s.ovn.org/network=" + a.Network,
		"external_ids:k8s.ovn.org/nad=" + a.NADNamespace + "/" + a.NADName,
		"external_ids:k8s.ovn.org/topology=localnet"}
}

// remove waits until ovnkube has removed a pod's LSP from the NB of
// node's zone (the pod is deleted first).
func (ovnkubeLSPs) remove(ctx context.Context, m *Manager, vm VM, node, lsp string) error {
	err := poll.Until(ctx, ovnkubeLSPTimeout, 100*time.Millisecond, "ovnkube to remove LSP "+lsp, func(ctx context.Context) (bool, error) {
		out, err := m.tb.NodeNBCtl(ctx, node, "--bare", "--columns=name", "find", "Logical_Switch_Port", "name="+lsp)
		return err == nil && strings.TrimSpace(out) == "", err
	})
	if err != nil {
		return fmt.Errorf("VM %s/%s: %w", vm.Namespace, vm.Name, err)
	}
	return nil
}

// remove deletes a pod's LSP from the NB of node's zone.
func (testbedLSPs) remove(ctx context.Context, m *Manager, vm VM, node, lsp string) error {
	if _, err := m.tb.NodeNBCtl(ctx, node, "--if-exists", "lsp-del", lsp); err != nil {
		return fmt.Errorf("VM %s/%s: delete LSP %s: %w", vm.Namespace, vm.Name, lsp, err)
	}
	return nil
}
