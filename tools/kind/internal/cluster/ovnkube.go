package cluster

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"time"
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
)

// Where ovnkube runs inside the control-plane node (ovn/ovnkube.sh).
const (
	ovnkubePath    = "/usr/local/bin/ovnkube"
	ovnkubePidfile = "/run/ovn-kubernetes/ovnkube.pid"
	ovnkubeLog     = "/var/log/ovn-kubernetes/ovnkube.log"
	// ovnkubeRouter is the first row ovnkube's default network
	// controller writes: the NB has it once ovnkube leads and syncs.
	ovnkubeRouter = "ovn_cluster_router"
)

// Valid reports whether m is one of the LSP modes.
func (m LSPMode) Valid() bool { return m == LSPOVNKube || m == LSPEmulated }

// LSPSpec is how StartLSPs sets up the cluster's LSP mode.
type LSPSpec struct {
	Name       string  // the cluster
	Kubeconfig string  // its kubeconfig, removed with a failed cluster
	Mode       LSPMode // who creates the LSPs
	Bin        string  // the static ovnkube binary (LSPOVNKube)
	Timeout    time.Duration
	Retain     bool // keep the cluster when the start fails (debugging)
}

// StartLSPs sets up the cluster's LSP mode: with LSPOVNKube it copies the
// ovnkube binary into the control-plane node, starts it there in the
// background (ovn/ovnkube.sh) and waits until it runs and has written the
// cluster router to the NB; then it records the mode in the ConfigMap
// kube-system/nqos-kind. A failure deletes the cluster unless Retain.
func StartLSPs(ctx context.Context, s LSPSpec, out io.Writer) error {
	if !s.Mode.Valid() {
		return fmt.Errorf("cluster %s: LSP mode %q: want %s or %s", s.Name, s.Mode, LSPOVNKube, LSPEmulated)
	}
	ctx, cancel := context.WithTimeout(ctx, s.Timeout)
	defer cancel()
	return onNodes(ctx, s.Name, s.Kubeconfig, s.Retain, func(_ []ovnNode, central *ovnNode) error {
		return startLSPs(ctx, s, central, out)
	})
}

func startLSPs(ctx context.Context, s LSPSpec, central *ovnNode, out io.Writer) error {
	if s.Mode == LSPOVNKube {
		if err := startOVNKube(ctx, central, s.Bin, out); err != nil {
			return fmt.Errorf("cluster %s: %w", s.Name, err)
		}
	}
	if err := recordMode(ctx, central, s.Mode); err != nil {
		return fmt.Errorf("cluster %s: %w", s.Name, err)
	}
	fmt.Fprintf(out, "cluster %s: LSPs by %s\n", s.Name, s.Mode)
	return nil
}

// startOVNKube installs the binary, starts ovnkube and waits for it.
func startOVNKube(ctx context.Context, central *ovnNode, binPath string, out io.Writer) error {
	bin, err := os.Open(binPath)
	if err != nil {
		return fmt.Errorf("ovnkube binary: %w", err)
	}
	defer bin.Close()
	t0 := time.Now()
	sh := "cat > " + ovnkubePath + ".new && chmod 0755 " + ovnkubePath + ".new && mv " + ovnkubePath + ".new " + ovnkubePath
	if _, err := run(ctx, central.kn, bin, "sh", "-c", sh); err != nil {
		return fmt.Errorf("ovnkube binary on node %s: %w", central.name, err)
	}
	t1 := time.Now()
	if _, err := script(ctx, central.kn, "ovnkube.sh", central.name); err != nil {
		return fmt.Errorf("ovnkube on node %s: %w", central.name, err)
	}
	if err := waitOVNKube(ctx, central); err != nil {
		return err
	}
	fmt.Fprintf(out, "node %s: ovnkube copied in %.1fs, up in %.1fs (log %s)\n",
		central.name, t1.Sub(t0).Seconds(), time.Since(t1).Seconds(), ovnkubeLog)
	return nil
}

// waitOVNKube polls until ovnkube's pidfile names a live process and the
// NB holds its cluster router. A process that has written its pidfile and
// exited fails the wait at once, with the tail of its log.
func waitOVNKube(ctx context.Context, central *ovnNode) error {
	return poll(ctx, "ovnkube on node "+central.name+" to write "+ovnkubeRouter, func() (bool, string, error) {
		state, err := run(ctx, central.kn, nil, "sh", "-c",
			`if [ ! -f `+ovnkubePidfile+` ]; then echo starting; elif kill -0 "$(cat `+ovnkubePidfile+`)"; then echo running; else echo exited; fi`)
		if err != nil {
			return false, "", err
		}
		switch strings.TrimSpace(state) {
		case "starting":
			return false, "no pidfile " + ovnkubePidfile + " yet", nil
		case "exited":
			tail, terr := run(ctx, central.kn, nil, "tail", "-n", "20", ovnkubeLog)
			if terr != nil {
				tail = terr.Error()
			}
			return false, "", fmt.Errorf("ovnkube exited; %s ends:\n%s", ovnkubeLog, tail)
		}
		got, err := run(ctx, central.kn, nil, "ovn-nbctl", "--timeout=5", "--bare", "--columns=name", "find", "Logical_Router", "name="+ovnkubeRouter)
		if err != nil {
			return false, err.Error(), nil
		}
		return strings.TrimSpace(got) == ovnkubeRouter, "no " + ovnkubeRouter + " in the NB", nil
	})
}

// recordMode writes the LSP mode into the ConfigMap.
func recordMode(ctx context.Context, central *ovnNode, mode LSPMode) error {
	cm := fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: %s\n  namespace: %s\ndata:\n  %s: %s\n",
		ModeConfigMap, ModeNamespace, ModeKey, mode)
	if _, err := run(ctx, central.kn, strings.NewReader(cm), "kubectl", "--kubeconfig=/etc/kubernetes/admin.conf", "apply", "-f", "-"); err != nil {
		return fmt.Errorf("ConfigMap %s/%s: %w", ModeNamespace, ModeConfigMap, err)
	}
	return nil
}
