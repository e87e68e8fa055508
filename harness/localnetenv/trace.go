package localnetenv

import (
	"context"
	"fmt"
	"strings"

	"github.com/nqos/nqos/harness"
	"github.com/nqos/nqos/harness/ovntrace"
	"github.com/nqos/nqos/topo/localnet"
)

// Trace syncs the SB of the sender's zone with its NB and runs ovn-trace
// there for the first packet of the run as the sender's guest puts it on
// its logical switch port: the guest NIC's MAC to the destination's MAC,
// the flow's addresses, protocol and destination port. On interconnect
// the sender's zone is the one whose northd built the sender's egress
// pipeline (where OVN marks and meters).
func (e *testbedEnv) Trace(ctx context.Context, run harness.FlowRun) (ovntrace.Prediction, error) {
	vm := e.sc.VM(run.Spec.From)
	z, err := e.zoneOfVM(vm.Namespace, vm.Name)
	if err != nil {
		return ovntrace.Prediction{}, fmt.Errorf("flow %s: %w", run.Name, err)
	}
	mf, err := e.microflow(ctx, run, z.zone)
	if err != nil {
		return ovntrace.Prediction{}, fmt.Errorf("flow %s: %w", run.Name, err)
	}
	if _, err := e.tb.ZoneNBCtl(ctx, z.zone, "--wait=sb", "sync"); err != nil {
		return ovntrace.Prediction{}, fmt.Errorf("flow %s: ovn-nbctl --wait=sb sync: %w", run.Name, err)
	}
	return ovntrace.Trace(ctx, z.zone.SB, mf)
}

func (e *testbedEnv) microflow(ctx context.Context, run harness.FlowRun, z localnet.Zone) (ovntrace.Microflow, error) {
	vm := e.sc.VM(run.Spec.From)
	in, err := e.vms.Get(vm.Namespace, vm.Name)
	if err != nil {
		return ovntrace.Microflow{}, err
	}
	if i := run.FromNIC; i >= len(in.LSPs) || i >= len(in.NICs) {
		return ovntrace.Microflow{}, fmt.Errorf("VM %s/%s has %d ports and %d NICs, not NIC %d", vm.Namespace, vm.Name, len(in.LSPs), len(in.NICs), i)
	}
	lsp := in.LSPs[run.FromNIC]
	src, err := e.tb.LinkMAC(in.Netns, in.NICs[run.FromNIC])
	if err != nil {
		return ovntrace.Microflow{}, err
	}
	dstNetns, dstIf, err := e.endpoint(run.Spec.To, run.ToNIC)
	if err != nil {
		return ovntrace.Microflow{}, err
	}
	dst, err := e.tb.LinkMAC(dstNetns, dstIf)
	if err != nil {
		return ovntrace.Microflow{}, err
	}
	sw, err := e.switchOf(ctx, z, lsp)
	if err != nil {
		return ovntrace.Microflow{}, err
	}
	proto, err := ovntrace.ParseProto(string(run.Spec.Protocol))
	if err != nil {
		return ovntrace.Microflow{}, err
	}
	mf := ovntrace.Microflow{Datapath: sw, InPort: lsp, EthSrc: src, EthDst: dst,
		Src: run.Spec.SrcIP, Dst: run.Spec.DstIP, Proto: proto}
	if proto != ovntrace.ProtoICMP {
		mf.DstPort = run.Spec.DstPort
	}
	return mf, nil
}

// switchOf is the logical switch of an LSP in zone z's NB.
func (e *testbedEnv) switchOf(ctx context.Context, z localnet.Zone, lsp string) (string, error) {
	out, err := e.tb.ZoneNBCtl(ctx, z, "lsp-get-ls", lsp)
	if err != nil {
		return "", err
	}
	return lspSwitch(lsp, out)
}

// lspSwitch is the switch name in the output of `ovn-nbctl lsp-get-ls
// <lsp>`: "<uuid> (<name>)".
func lspSwitch(lsp, out string) (string, error) {
	i, j := strings.Index(out, "("), strings.LastIndex(out, ")")
	if i < 0 || j < i {
		return "", fmt.Errorf("LSP %s: ovn-nbctl lsp-get-ls printed %q, want \"<uuid> (<name>)\"", lsp, strings.TrimSpace(out))
	}
	return out[i+1 : j], nil
}
