package cluster

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/nqos/nqos/tools/kind/internal/kindnode"
)

// LSPMode says who creates the launcher pods' LSPs on the localnet
// networks of a cluster.
type LSPMode string

// The LSP modes: OVN-Kubernetes' ovnkube in the control plane, or the
// harness emulating ovnkube's pod handler.
const (
	LSPOVNKube  LSPMode = "ovnkube"
	LSPEmulated LSPMode = "emulated"
)

// Where the cluster records its LSP mode: a ConfigMap the testbed reads
// (topo/localnet) to know whether to create the LSPs or wait for them.
const (
	ModeConfigMap = "nqos-kind"
	ModeNamespace = "kube-system"
	ModeKey       = "lsp"
	// NetworkQoSKey says whether ovnkube's own NetworkQoS controller
	// runs ("on" or "off"; absent: off): nqos-kind deploy sets the
	// controller's --ovnkube-enable-network-qos from it.
	NetworkQoSKey = "networkqos"
)

// Where ovnkube runs inside a node (ovn/ovnkube.sh).
const (
	ovnkubePath = "/usr/local/bin/ovnkube"
	// ovnkubeKubeconfig is the admin kubeconfig with the control plane's
	// IP, written into every node that runs ovnkube.
	ovnkubeKubeconfig = "/etc/kubernetes/ovnkube.conf"
	// ovnkubeRouter is the first row ovnkube's default network
	// controller writes: the NB has it once ovnkube leads and syncs.
	ovnkubeRouter = "ovn_cluster_router"
)

// Valid reports whether m is one of the LSP modes.
func (m LSPMode) Valid() bool { return m == LSPOVNKube || m == LSPEmulated }

// LSPSpec is how StartLSPs sets up the cluster's LSP mode.
type LSPSpec struct {
	Name       string   // the cluster
	Kubeconfig string   // its kubeconfig, removed with a failed cluster
	Mode       LSPMode  // who creates the LSPs
	Topology   Topology // the cluster's (Up made it so)
	Bin        string   // the static ovnkube binary (LSPOVNKube)
	Timeout    time.Duration
	Retain     bool // keep the cluster when the start fails (debugging)
}

// StartLSPs sets up the cluster's LSP mode: with LSPOVNKube it copies the
// ovnkube binary into the nodes that run it, starts its processes there
// in the background (ovn/ovnkube.sh; central: one master in the control
// plane; interconnect: the cluster manager there and a zone controller
// per node) and waits until they run and every NB-writing one has written
// the cluster router to its NB; then it records the mode and topology in
// the ConfigMap kube-system/nqos-kind. A failure deletes the cluster
// unless Retain.
func StartLSPs(ctx context.Context, s LSPSpec, out io.Writer) error {
	if !s.Mode.Valid() {
		return fmt.Errorf("cluster %s: LSP mode %q: want %s or %s", s.Name, s.Mode, LSPOVNKube, LSPEmulated)
	}
	if !s.Topology.Valid() {
		return fmt.Errorf("cluster %s: topology %q: want %s or %s", s.Name, s.Topology, Interconnect, Central)
	}
	ctx, cancel := context.WithTimeout(ctx, s.Timeout)
	defer cancel()
	return onNodes(ctx, s.Name, s.Kubeconfig, s.Retain, func(ns []ovnNode, central *ovnNode) error {
		if s.Mode == LSPOVNKube {
			if err := startOVNKube(ctx, ovnkubeProcs(s.Topology, ns, central), central, s.Bin, out); err != nil {
				return fmt.Errorf("cluster %s: %w", s.Name, err)
			}
		}
		if err := recordMode(ctx, central, s.Mode, false, s.Topology); err != nil {
			return fmt.Errorf("cluster %s: %w", s.Name, err)
		}
		fmt.Fprintf(out, "cluster %s: LSPs by %s, topology %s\n", s.Name, s.Mode, s.Topology)
		return nil
	})
}

// startOVNKube installs the binary and starts the processes in order,
// then waits for each.
func startOVNKube(ctx context.Context, ps []ovnkubeProc, central *ovnNode, binPath string, out io.Writer) error {
	bin, err := os.ReadFile(binPath)
	if err != nil {
		return fmt.Errorf("ovnkube binary: %w", err)
	}
	t0 := time.Now()
	if err := installOVNKube(ctx, ps, central, bin); err != nil {
		return err
	}
	t1 := time.Now()
	for _, p := range ps {
		if err := p.start(ctx, false, false); err != nil {
			return err
		}
	}
	for _, p := range ps {
		if err := p.wait(ctx); err != nil {
			return err
		}
		fmt.Fprintf(out, "%s up (log %s)\n", p, p.log())
	}
	fmt.Fprintf(out, "ovnkube: %d processes, copied in %.1fs, up in %.1fs\n", len(ps), t1.Sub(t0).Seconds(), time.Since(t1).Seconds())
	return nil
}

// SwitchOVNKubeNetworkQoS restarts the ovnkube processes of cluster name
// (made with -lsp ovnkube) with their NetworkQoS controller on or off
// (ovn/ovnkube.sh; a process with that setting already is kept), waits
// until they run and lead again and records the setting in the
// ConfigMap. The NetworkQoS CRD must be installed first (nqos-kind
// deploy): ovnkube's informer needs it. A failure leaves the cluster as
// it is.
func SwitchOVNKubeNetworkQoS(ctx context.Context, name, kubeconfig string, on bool, timeout time.Duration, out io.Writer) error {
	return restartOVNKube(ctx, name, kubeconfig, on, false, timeout, out)
}

// RestartOVNKube stops the ovnkube processes of cluster name and starts
// them again with the same NetworkQoS setting on (their startup sync and
// repair run again), then waits as SwitchOVNKubeNetworkQoS does.
func RestartOVNKube(ctx context.Context, name, kubeconfig string, on bool, timeout time.Duration, out io.Writer) error {
	return restartOVNKube(ctx, name, kubeconfig, on, true, timeout, out)
}

func restartOVNKube(ctx context.Context, name, kubeconfig string, on, always bool, timeout time.Duration, out io.Writer) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	return onNodes(ctx, name, kubeconfig, true, func(ns []ovnNode, central *ovnNode) error {
		t0 := time.Now()
		topo, err := readTopology(ctx, central)
		if err != nil {
			return fmt.Errorf("cluster %s: %w", name, err)
		}
		ps := ovnkubeProcs(topo, ns, central)
		for _, p := range ps {
			if err := p.start(ctx, on, always); err != nil {
				return fmt.Errorf("cluster %s: %w", name, err)
			}
		}
		for _, p := range ps {
			if err := p.wait(ctx); err != nil {
				return fmt.Errorf("cluster %s: %w", name, err)
			}
			if err := p.checkSetting(ctx, on); err != nil {
				return fmt.Errorf("cluster %s: %w", name, err)
			}
			if on {
				if err := p.waitNQoSStarted(ctx); err != nil {
					return fmt.Errorf("cluster %s: %w", name, err)
				}
			}
		}
		if err := recordMode(ctx, central, LSPOVNKube, on, topo); err != nil {
			return fmt.Errorf("cluster %s: %w", name, err)
		}
		verb := map[bool]string{true: "restarted", false: "set"}[always]
		fmt.Fprintf(out, "cluster %s (%s): %d ovnkube processes %s, NetworkQoS controller %s (ready in %.1fs)\n",
			name, topo, len(ps), verb, onOff(on), time.Since(t0).Seconds())
		return nil
	})
}

// onOff is the NetworkQoS setting as ovn/ovnkube.sh and the ConfigMap spell it.
func onOff(on bool) string {
	if on {
		return "on"
	}
	return "off"
}

// recordMode writes the LSP mode, ovnkube's NetworkQoS setting and the
// topology into the ConfigMap.
func recordMode(ctx context.Context, central *ovnNode, mode LSPMode, networkQoS bool, topo Topology) error {
	cm := fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: %s\n  namespace: %s\ndata:\n  %s: %s\n  %s: %q\n  %s: %s\n",
		ModeConfigMap, ModeNamespace, ModeKey, mode, NetworkQoSKey, onOff(networkQoS), TopologyKey, topo)
	if _, err := kindnode.Run(ctx, central.kn, strings.NewReader(cm), "kubectl", "--kubeconfig=/etc/kubernetes/admin.conf", "apply", "-f", "-"); err != nil {
		return fmt.Errorf("ConfigMap %s/%s: %w", ModeNamespace, ModeConfigMap, err)
	}
	return nil
}
