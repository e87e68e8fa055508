package cluster

import (
	"context"
	"fmt"
	"strings"

	"github.com/nqos/nqos/tools/kind/internal/kindnode"
)

// ovnkubeRole is what one ovnkube process does (ovn/ovnkube.sh's ROLE).
type ovnkubeRole string

// The roles: master on the central topology; on interconnect one cluster
// manager in the control plane and a zone controller in every node.
const (
	roleMaster         ovnkubeRole = "master"
	roleClusterManager ovnkubeRole = "cluster-manager"
	roleController     ovnkubeRole = "controller"
)

// ovnkubeProc is one ovnkube process of a cluster: its node and role.
type ovnkubeProc struct {
	node *ovnNode
	role ovnkubeRole
}

// base names the process's files under /run/ovn-kubernetes and
// /var/log/ovn-kubernetes.
func (p ovnkubeProc) base() string {
	if p.role == roleClusterManager {
		return "ovnkube-cluster-manager"
	}
	return "ovnkube"
}

func (p ovnkubeProc) pidfile() string { return "/run/ovn-kubernetes/" + p.base() + ".pid" }
func (p ovnkubeProc) log() string     { return "/var/log/ovn-kubernetes/" + p.base() + ".log" }
func (p ovnkubeProc) nqosFile() string {
	return "/run/ovn-kubernetes/" + p.base() + ".network-qos"
}

// writesNB: the process writes its node's NB (the master or a zone
// controller), so its cluster router there says it leads and synced.
func (p ovnkubeProc) writesNB() bool { return p.role != roleClusterManager }

func (p ovnkubeProc) String() string {
	return fmt.Sprintf("ovnkube %s on node %s", p.role, p.node.name)
}

// ovnkubeProcs are the processes of a topology, the cluster manager
// first: it hands out the node and network IDs the zone controllers wait
// for.
func ovnkubeProcs(t Topology, ns []ovnNode, central *ovnNode) []ovnkubeProc {
	if t != Interconnect {
		return []ovnkubeProc{{node: central, role: roleMaster}}
	}
	ps := []ovnkubeProc{{node: central, role: roleClusterManager}}
	for i := range ns {
		ps = append(ps, ovnkubeProc{node: &ns[i], role: roleController})
	}
	return ps
}

// start runs ovn/ovnkube.sh for the process (restart: stop and start it
// even when it runs with the same setting).
func (p ovnkubeProc) start(ctx context.Context, nqos, restart bool) error {
	args := []string{string(p.role), p.node.name, onOff(nqos)}
	if restart {
		args = append(args, "restart")
	}
	if _, err := script(ctx, p.node.kn, "ovnkube.sh", args...); err != nil {
		return fmt.Errorf("%s: %w", p, err)
	}
	return nil
}

// wait polls until the process's pidfile names a live process and, for
// one that writes its node's NB, the NB holds its cluster router. A
// process that has written its pidfile and exited fails the wait at once,
// with the tail of its log.
func (p ovnkubeProc) wait(ctx context.Context) error {
	kn := p.node.kn
	return poll(ctx, p.String()+" to run", func() (bool, string, error) {
		state, err := kindnode.Run(ctx, kn, nil, "sh", "-c",
			`if [ ! -f `+p.pidfile()+` ]; then echo starting; elif kill -0 "$(cat `+p.pidfile()+`)"; then echo running; else echo exited; fi`)
		if err != nil {
			return false, "", err
		}
		switch strings.TrimSpace(state) {
		case "starting":
			return false, "no pidfile " + p.pidfile() + " yet", nil
		case "exited":
			tail, terr := kindnode.Run(ctx, kn, nil, "tail", "-n", "20", p.log())
			if terr != nil {
				tail = terr.Error()
			}
			return false, "", fmt.Errorf("%s exited; %s ends:\n%s", p, p.log(), tail)
		}
		if !p.writesNB() {
			return true, "", nil
		}
		got, err := kindnode.Run(ctx, kn, nil, "ovn-nbctl", "--timeout=5", "--bare", "--columns=name", "find", "Logical_Router", "name="+ovnkubeRouter)
		if err != nil {
			return false, err.Error(), nil
		}
		return strings.TrimSpace(got) == ovnkubeRouter, "no " + ovnkubeRouter + " in the NB", nil
	})
}

// checkSetting fails unless the running process has the NetworkQoS
// setting on.
func (p ovnkubeProc) checkSetting(ctx context.Context, on bool) error {
	got, err := kindnode.Run(ctx, p.node.kn, nil, "cat", p.nqosFile())
	if err != nil {
		return fmt.Errorf("%s: its NetworkQoS setting: %w", p, err)
	}
	if strings.TrimSpace(got) != onOff(on) {
		return fmt.Errorf("%s runs with NetworkQoS %q, want %q", p, strings.TrimSpace(got), onOff(on))
	}
	return nil
}

// waitNQoSStarted polls until the running process (its pid in the klog
// header) has logged that its default network's NetworkQoS controller
// started: it leads and serves NetworkQoS objects. The cluster manager
// runs no such controller and passes at once.
func (p ovnkubeProc) waitNQoSStarted(ctx context.Context) error {
	if !p.writesNB() {
		return nil
	}
	sh := `pid="$(cat ` + p.pidfile() + `)" && grep -cE "^I[0-9. :]+ +$pid network_qos_controller.go:[0-9]+\] Starting controller default-network-controller" ` + p.log() + ` || true`
	return poll(ctx, p.String()+" to start its NetworkQoS controller", func() (bool, string, error) {
		n, err := kindnode.Run(ctx, p.node.kn, nil, "sh", "-c", sh)
		if err != nil {
			return false, "", err
		}
		return strings.TrimSpace(n) != "0", "no \"Starting controller\" of its NetworkQoS controller in " + p.log() + " yet", nil
	})
}

// installOVNKube copies the binary and the kubeconfig into every node
// that runs one of ps.
func installOVNKube(ctx context.Context, ps []ovnkubeProc, central *ovnNode, bin []byte) error {
	admin, err := kindnode.Run(ctx, central.kn, nil, "cat", "/etc/kubernetes/admin.conf")
	if err != nil {
		return fmt.Errorf("admin kubeconfig: %w", err)
	}
	conf, err := withServer(admin, "https://"+central.internal+":6443")
	if err != nil {
		return err
	}
	done := map[string]bool{}
	for _, p := range ps {
		if done[p.node.name] {
			continue
		}
		done[p.node.name] = true
		sh := "cat > " + ovnkubePath + ".new && chmod 0755 " + ovnkubePath + ".new && mv " + ovnkubePath + ".new " + ovnkubePath
		if _, err := kindnode.Run(ctx, p.node.kn, strings.NewReader(string(bin)), "sh", "-c", sh); err != nil {
			return fmt.Errorf("ovnkube binary on node %s: %w", p.node.name, err)
		}
		if _, err := kindnode.Run(ctx, p.node.kn, strings.NewReader(conf), "sh", "-c", "umask 077 && cat > "+ovnkubeKubeconfig); err != nil {
			return fmt.Errorf("kubeconfig %s on node %s: %w", ovnkubeKubeconfig, p.node.name, err)
		}
	}
	return nil
}

// withServer replaces the one server: line of a kubeconfig.
func withServer(kubeconfig, server string) (string, error) {
	lines := strings.Split(kubeconfig, "\n")
	n := 0
	for i, l := range lines {
		if k, _, ok := strings.Cut(strings.TrimSpace(l), ":"); ok && k == "server" {
			lines[i] = l[:len(l)-len(strings.TrimLeft(l, " "))] + "server: " + server
			n++
		}
	}
	if n != 1 {
		return "", fmt.Errorf("admin kubeconfig: %d server lines, want 1", n)
	}
	return strings.Join(lines, "\n"), nil
}
