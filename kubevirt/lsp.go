package kubevirt

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/nqos/nqos/internal/poll"
)

// ovnkubeLSPTimeout bounds the wait for ovnkube to create a launcher
// pod's LSP, or to remove it after the pod is deleted.
const ovnkubeLSPTimeout = time.Minute

// CreateLSPs creates the LSPs of a VM created with SkipLSP and waits
// until they are up.
func (m *Manager) CreateLSPs(ctx context.Context, namespace, name string) error {
	return m.withVM(namespace, name, func(in *instance) error { return m.createLSPs(ctx, in, in.node, false) })
}

// createLSPs writes the VM's LSPs, or where ovnkube writes them waits
// for them, then (unless noWait) waits until they are up.
func (m *Manager) createLSPs(ctx context.Context, in *instance, node string, noWait bool) error {
	for i, a := range in.atts {
		add := m.addLSP
		if m.tb.OVNKubeLSPs() {
			add = m.awaitLSP
		}
		if err := add(ctx, in.vm, in.pod, a, in.lsps[i], node); err != nil {
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

// addLSP creates a pod LSP as ovnkube does on a secondary network, in
// the NB of the zone of chassis (the pod's node): on interconnect only
// the zone of the pod's node has its LSP, as ovnkube's localnet
// controller creates ports for local pods only.
func (m *Manager) addLSP(ctx context.Context, vm VM, _ string, a attachment, lsp, chassis string) error {
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

// awaitLSP waits until ovnkube has created the LSP of pod's attachment a
// and checks that its addresses start with the MAC the networks
// annotation asked for and that it is requested on chassis.
func (m *Manager) awaitLSP(ctx context.Context, vm VM, pod string, a attachment, lsp, chassis string) error {
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

// deleteLSP deletes a pod's LSP from the NB of node's zone, or where
// ovnkube owns it waits until ovnkube has removed it (the pod is deleted
// first).
func (m *Manager) deleteLSP(ctx context.Context, vm VM, node, lsp string) error {
	if m.tb.OVNKubeLSPs() {
		err := poll.Until(ctx, ovnkubeLSPTimeout, 100*time.Millisecond, "ovnkube to remove LSP "+lsp, func(ctx context.Context) (bool, error) {
			out, err := m.tb.NodeNBCtl(ctx, node, "--bare", "--columns=name", "find", "Logical_Switch_Port", "name="+lsp)
			return err == nil && strings.TrimSpace(out) == "", err
		})
		if err != nil {
			return fmt.Errorf("VM %s/%s: %w", vm.Namespace, vm.Name, err)
		}
		return nil
	}
	if _, err := m.tb.NodeNBCtl(ctx, node, "--if-exists", "lsp-del", lsp); err != nil {
		return fmt.Errorf("VM %s/%s: delete LSP %s: %w", vm.Namespace, vm.Name, lsp, err)
	}
	return nil
}
