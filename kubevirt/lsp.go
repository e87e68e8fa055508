package kubevirt

import (
	"context"
	"fmt"
)

// CreateLSPs creates the LSPs of a VM created with SkipLSP and waits
// until they are up.
func (m *Manager) CreateLSPs(ctx context.Context, namespace, name string) error {
	return m.withVM(namespace, name, func(in *instance) error { return m.createLSPs(ctx, in, in.node, false) })
}

func (m *Manager) createLSPs(ctx context.Context, in *instance, node string, noWait bool) error {
	for i, a := range in.atts {
		if err := m.addLSP(ctx, in.vm, a, in.lsps[i], node); err != nil {
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

// addLSP creates a pod LSP as ovnkube does on a secondary network.
func (m *Manager) addLSP(ctx context.Context, vm VM, a attachment, lsp, chassis string) error {
	addr := a.MAC
	for _, ip := range a.ovnIPs() {
		addr += " " + prefixAddr(ip)
	}
	args := []string{"--", "lsp-add", a.Switch, lsp,
		"--", "lsp-set-addresses", lsp, addr,
		"--", "lsp-set-port-security", lsp, addr,
		"--", "set", "Logical_Switch_Port", lsp, "options:requested-chassis=" + chassis}
	if _, err := m.tb.NBCtl(ctx, append(args, lspExternalIDs(vm, a)...)...); err != nil {
		return fmt.Errorf("VM %s/%s: LSP %s: %w", vm.Namespace, vm.Name, lsp, err)
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

func (m *Manager) deleteLSP(ctx context.Context, vm VM, lsp string) error {
	if _, err := m.tb.NBCtl(ctx, "--if-exists", "lsp-del", lsp); err != nil {
		return fmt.Errorf("VM %s/%s: delete LSP %s: %w", vm.Namespace, vm.Name, lsp, err)
	}
	return nil
}
