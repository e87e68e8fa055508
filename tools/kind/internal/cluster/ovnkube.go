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
	// NetworkQoSKey says whether ovnkube's own NetworkQoS controller
	// runs ("on" or "off"; absent: off): nqos-kind deploy sets the
	// controller's --ovnkube-enable-network-qos from it.
	NetworkQoSKey = "networkqos"
)

// Where ovnkube runs inside the control-plane node (ovn/ovnkube.sh).
const (
	ovnkubePath    = "/usr/local/bin/ovnkube"
	ovnkubePidfile = "/run/ovn-kubernetes/ovnkube.pid"
	ovnkubeLog     = "/var/log/ovn-kubernetes/ovnkube.log"
	// ovnkubeNQoSFile holds the running process's NetworkQoS setting.
	ovnkubeNQoSFile = "/run/ovn-kubernetes/network-qos"
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
	if err := recordMode(ctx, central, s.Mode, false); err != nil {
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
	if _, err := script(ctx, central.kn, "ovnkube.sh", central.name, onOff(false)); err != nil {
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

// SwitchOVNKubeNetworkQoS restarts the ovnkube of cluster name (made with
// -lsp ovnkube) with its NetworkQoS controller on or off (ovn/ovnkube.sh;
// a process with that setting already is kept), waits until it runs and
// leads again and records the setting in the ConfigMap. The NetworkQoS
// CRD must be installed first (nqos-kind deploy): ovnkube's informer
// needs it. A failure leaves the cluster as it is.
func SwitchOVNKubeNetworkQoS(ctx context.Context, name, kubeconfig string, on bool, timeout time.Duration, out io.Writer) error {
	return restartOVNKube(ctx, name, kubeconfig, on, false, timeout, out)
}

// RestartOVNKube stops the ovnkube of cluster name and starts it again
// with the same NetworkQoS setting on (its startup sync and repair run
// again), then waits as SwitchOVNKubeNetworkQoS does.
func RestartOVNKube(ctx context.Context, name, kubeconfig string, on bool, timeout time.Duration, out io.Writer) error {
	return restartOVNKube(ctx, name, kubeconfig, on, true, timeout, out)
}

func restartOVNKube(ctx context.Context, name, kubeconfig string, on, always bool, timeout time.Duration, out io.Writer) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	return onNodes(ctx, name, kubeconfig, true, func(_ []ovnNode, central *ovnNode) error {
		t0 := time.Now()
		args := []string{central.name, onOff(on)}
		if always {
			args = append(args, "restart")
		}
		if _, err := script(ctx, central.kn, "ovnkube.sh", args...); err != nil {
			return fmt.Errorf("cluster %s: ovnkube on node %s: %w", name, central.name, err)
		}
		if err := waitOVNKube(ctx, central); err != nil {
			return fmt.Errorf("cluster %s: %w", name, err)
		}
		got, err := run(ctx, central.kn, nil, "cat", ovnkubeNQoSFile)
		if err != nil {
			return fmt.Errorf("cluster %s: ovnkube's NetworkQoS setting: %w", name, err)
		}
		if strings.TrimSpace(got) != onOff(on) {
			return fmt.Errorf("cluster %s: ovnkube runs with NetworkQoS %q, want %q", name, strings.TrimSpace(got), onOff(on))
		}
		if on {
			if err := waitNQoSStarted(ctx, central); err != nil {
				return fmt.Errorf("cluster %s: %w", name, err)
			}
		}
		if err := recordMode(ctx, central, LSPOVNKube, on); err != nil {
			return fmt.Errorf("cluster %s: %w", name, err)
		}
		verb := map[bool]string{true: "restarted", false: "set"}[always]
		fmt.Fprintf(out, "cluster %s: ovnkube %s, its NetworkQoS controller %s (ready in %.1fs)\n", name, verb, onOff(on), time.Since(t0).Seconds())
		return nil
	})
}

// waitNQoSStarted polls until the running ovnkube process (its pid in the
// klog header) has logged that its default network's NetworkQoS
// controller started: it leads and serves NetworkQoS objects.
func waitNQoSStarted(ctx context.Context, central *ovnNode) error {
	sh := `pid="$(cat ` + ovnkubePidfile + `)" && grep -cE "^I[0-9. :]+ +$pid network_qos_controller.go:[0-9]+\] Starting controller default-network-controller" ` + ovnkubeLog + ` || true`
	return poll(ctx, "ovnkube on node "+central.name+" to start its NetworkQoS controller", func() (bool, string, error) {
		n, err := run(ctx, central.kn, nil, "sh", "-c", sh)
		if err != nil {
			return false, "", err
		}
		return strings.TrimSpace(n) != "0", "no \"Starting controller\" of its NetworkQoS controller in " + ovnkubeLog + " yet", nil
	})
}

// onOff is the NetworkQoS setting as ovn/ovnkube.sh and the ConfigMap spell it.
func onOff(on bool) string {
	if on {
		return "on"
	}
	return "off"
}

// recordMode writes the LSP mode and ovnkube's NetworkQoS setting into
// the ConfigMap.
func recordMode(ctx context.Context, central *ovnNode, mode LSPMode, networkQoS bool) error {
	cm := fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: %s\n  namespace: %s\ndata:\n  %s: %s\n  %s: %q\n",
		ModeConfigMap, ModeNamespace, ModeKey, mode, NetworkQoSKey, onOff(networkQoS))
	if _, err := run(ctx, central.kn, strings.NewReader(cm), "kubectl", "--kubeconfig=/etc/kubernetes/admin.conf", "apply", "-f", "-"); err != nil {
		return fmt.Errorf("ConfigMap %s/%s: %w", ModeNamespace, ModeConfigMap, err)
	}
	return nil
}
