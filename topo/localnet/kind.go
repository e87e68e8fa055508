package localnet

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"sort"
	"strconv"
	"strings"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

// ErrNotSupported is the error of an operation a testbed on a KinD
// cluster cannot do (its daemons, pods and API server are the cluster's).
var ErrNotSupported = errors.New("not supported on a KinD cluster")

// Ports of OVN central in the control-plane node of a KinD cluster.
const (
	kindNBPort = 6641
	kindSBPort = 6642
	// kindLauncherImage is the image every KinD node holds (pinned in its
	// containerd): the launcher pods run it.
	kindLauncherImage = "registry.k8s.io/pause:3.10.2"
	// kindUnderlayMapping is the bridge mapping the cluster's nodes start
	// with (br-ex holds the node IP); Close puts it back.
	kindUnderlayMapping = "physnet:br-ex"
)

// KindCluster is a running KinD cluster a testbed runs on instead of its
// own central, nodes and API server: OVN central in the control-plane
// node (NB and SB on TCP), Open vSwitch (userspace datapath) and
// ovn-controller in every node, the cluster's API server, kubelets and
// CNI. The testbed adds only the fabric, the external hosts, each node's
// br-phys with its uplink into the fabric, and the networks.
type KindCluster struct {
	Name       string     `json:"name"`
	Kubeconfig string     `json:"kubeconfig"`
	DockerHost string     `json:"dockerHost,omitempty"`
	Nodes      []KindNode `json:"nodes"` // control plane first, then by name
	// LSPs is who creates the launcher pods' LSPs: KindLSPOVNKube or
	// KindLSPEmulated (kind_lsp.go).
	LSPs string `json:"lsps"`
	// Topology is the cluster's OVN control plane as `nqos-kind up
	// -topology` recorded it: Interconnect (an NB, SB and ovn-northd in
	// every node, on TCP at its InternalIP) or Central (one in the control
	// plane).
	Topology Topology `json:"topology"`
}

// KindNode is one node container of a KinD cluster.
type KindNode struct {
	Name       string `json:"name"` // container, Kubernetes node and OVN chassis name
	Role       string `json:"role"`
	PID        int    `json:"pid"` // the container's init, in this PID namespace
	InternalIP string `json:"internalIP"`
}

// NB is the Northbound address of the control-plane node (the cluster's
// one NB on the central topology, its zone's on interconnect).
func (k KindCluster) NB() string { return k.centralAddr(kindNBPort) }

// SB is the Southbound address of the control-plane node, as NB.
func (k KindCluster) SB() string { return k.centralAddr(kindSBPort) }

func (k KindCluster) centralAddr(port int) string {
	if len(k.Nodes) == 0 {
		return ""
	}
	return nodeAddr(k.Nodes[0].InternalIP, port)
}

func nodeAddr(ip string, port int) string { return "tcp:" + ip + ":" + strconv.Itoa(port) }

// DiscoverKind reads the node containers of KinD cluster name from the
// Docker engine at dockerHost ("" = the default engine) and who creates
// the launcher pods' LSPs there.
func DiscoverKind(ctx context.Context, name, kubeconfig, dockerHost string) (KindCluster, error) {
	k := KindCluster{Name: name, Kubeconfig: kubeconfig, DockerHost: dockerHost}
	out, err := k.docker(ctx, "ps", "--filter", "label=io.x-k8s.kind.cluster="+name, "--format", "{{.Names}}")
	if err != nil {
		return k, err
	}
	names := strings.Fields(out)
	if len(names) == 0 {
		return k, fmt.Errorf("KinD cluster %s: no running node containers (make kind-up)", name)
	}
	out, err = k.docker(ctx, append([]string{"inspect", "--format",
		`{{.Name}} {{.State.Pid}} {{index .Config.Labels "io.x-k8s.kind.role"}} {{range .NetworkSettings.Networks}}{{.IPAddress}} {{end}}`}, names...)...)
	if err != nil {
		return k, err
	}
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		n, err := parseKindNode(line)
		if err != nil {
			return k, fmt.Errorf("KinD cluster %s: %w", name, err)
		}
		k.Nodes = append(k.Nodes, n)
	}
	sort.Slice(k.Nodes, func(i, j int) bool {
		ci, cj := k.Nodes[i].Role == "control-plane", k.Nodes[j].Role == "control-plane"
		if ci != cj {
			return ci
		}
		return k.Nodes[i].Name < k.Nodes[j].Name
	})
	if k.Nodes[0].Role != "control-plane" {
		return k, fmt.Errorf("KinD cluster %s: no control-plane node among %d", name, len(k.Nodes))
	}
	if k.LSPs, err = k.discoverLSPMode(ctx); err != nil {
		return k, err
	}
	k.Topology, err = k.discoverTopology(ctx)
	return k, err
}

// parseKindNode reads one line of DiscoverKind's docker inspect format.
func parseKindNode(line string) (KindNode, error) {
	f := strings.Fields(line)
	if len(f) != 4 {
		return KindNode{}, fmt.Errorf("node container %q: want name, pid, role and one address", line)
	}
	pid, err := strconv.Atoi(f[1])
	if err != nil || pid <= 0 {
		return KindNode{}, fmt.Errorf("node container %s: pid %q: not running", f[0], f[1])
	}
	return KindNode{Name: strings.TrimPrefix(f[0], "/"), PID: pid, Role: f[2], InternalIP: f[3]}, nil
}

// docker runs the docker CLI against the cluster's engine.
func (k KindCluster) docker(ctx context.Context, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, "docker", args...)
	if k.DockerHost != "" {
		cmd.Env = append(cmd.Environ(), "DOCKER_HOST="+k.DockerHost)
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("docker %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return stdout.String(), nil
}

// restConfig is the admin client config of the cluster.
func (k KindCluster) restConfig() (*rest.Config, error) {
	cfg, err := clientcmd.BuildConfigFromFlags("", k.Kubeconfig)
	if err != nil {
		return nil, fmt.Errorf("KinD cluster %s: kubeconfig %s: %w", k.Name, k.Kubeconfig, err)
	}
	return cfg, nil
}

// CentralExec runs argv where OVN central runs: in the control-plane
// node container on a KinD cluster, else here (the root namespace).
func (t *Testbed) CentralExec(ctx context.Context, argv ...string) (string, error) {
	return t.cluster().centralExec(ctx, argv...)
}

// topology is the cluster's; "" (a value made by hand) is Central.
func (k KindCluster) topology() Topology {
	if k.Topology == "" {
		return Central
	}
	return k.Topology
}
