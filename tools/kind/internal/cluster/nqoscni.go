package cluster

import (
	"context"
	_ "embed"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"sigs.k8s.io/kind/pkg/cluster/nodes"

	"github.com/nqos/nqos/tools/kind/internal/kindnode"
)

// Where nqos-cni and its credentials go on every node, and who it is.
const (
	pluginPath       = "/opt/cni/bin/nqos-cni"
	pluginKubeconfig = "/etc/cni/net.d/nqos-cni.d/kubeconfig"
	pluginOVSDB      = "unix:/run/openvswitch/db.sock"
	pluginAccount    = "nqos-cni"
	pluginNamespace  = "kube-system"
	// pluginTokenLife is the validity asked of the plugin's token: a
	// cluster lives for a test run, far less than a year.
	pluginTokenLife = "8760h"
	nadCRDName      = "network-attachment-definitions.k8s.cni.cncf.io"
	apiServerPort   = "6443"
	// pluginTimeout bounds InstallPlugin.
	pluginTimeout = 3 * time.Minute
)

// pluginRBAC is the ServiceAccount nqos-cni reads the API as, with get on
// pods and NADs only.
//
//go:embed cni/rbac.yaml
var pluginRBAC string

// PluginSpec is what InstallPlugin puts into a running cluster.
type PluginSpec struct {
	Name       string // the cluster
	Kubeconfig string // its kubeconfig, removed with a failed cluster
	Bin        string // the statically linked nqos-cni binary
	NADCRD     string // the NetworkAttachmentDefinition CRD manifest
	Retain     bool   // keep the cluster when the install fails (debugging)
}

// pluginEntry is nqos-cni's element of the conflist, chained after portmap.
func pluginEntry() string {
	return fmt.Sprintf(`{"type": "nqos-cni", "kubeconfig": %q, "ovsDB": %q}`, pluginKubeconfig, pluginOVSDB)
}

// InstallPlugin installs the nqos-cni chained plugin into the cluster Up
// made: the NAD CRD when the cluster has none, the plugin's
// ServiceAccount and ClusterRole, then on every node the binary, a
// kubeconfig with a token of that ServiceAccount (server: the control
// plane's InternalIP, since the nodes have no service routing) and the
// conflist with the plugin appended. It checks from every node that the
// binary runs and the kubeconfig may get pods. A failure deletes the
// cluster unless Retain.
func InstallPlugin(ctx context.Context, s PluginSpec, out io.Writer) error {
	bin, err := os.ReadFile(s.Bin)
	if err != nil {
		return fmt.Errorf("cluster %s: nqos-cni binary: %w", s.Name, err)
	}
	crd, err := os.ReadFile(s.NADCRD)
	if err != nil {
		return fmt.Errorf("cluster %s: NAD CRD: %w", s.Name, err)
	}
	ctx, cancel := context.WithTimeout(ctx, pluginTimeout)
	defer cancel()
	return onNodes(ctx, s.Name, s.Kubeconfig, s.Retain, func(ns []ovnNode, central *ovnNode) error {
		return installPlugin(ctx, s, ns, central, bin, crd, out)
	})
}

func installPlugin(ctx context.Context, s PluginSpec, ns []ovnNode, central *ovnNode, bin, crd []byte, out io.Writer) error {
	if err := ensureNADCRD(ctx, central.kn, crd, out); err != nil {
		return fmt.Errorf("cluster %s: %w", s.Name, err)
	}
	kubeconfig, expires, err := pluginCredentials(ctx, central)
	if err != nil {
		return fmt.Errorf("cluster %s: %w", s.Name, err)
	}
	for _, n := range ns {
		if err := installOnNode(ctx, n, bin, kubeconfig); err != nil {
			return err
		}
	}
	fmt.Fprintf(out, "cluster %s: nqos-cni on %d nodes (ServiceAccount %s/%s, token until %s)\n",
		s.Name, len(ns), pluginNamespace, pluginAccount, expires)
	return nil
}

// ensureNADCRD creates the NAD CRD when the cluster lacks it and waits
// until it is Established.
func ensureNADCRD(ctx context.Context, cp nodes.Node, crd []byte, out io.Writer) error {
	have, err := kubectl(ctx, cp, "get", "crd", nadCRDName, "--ignore-not-found", "-o", "name")
	if err != nil {
		return fmt.Errorf("CRD %s: %w", nadCRDName, err)
	}
	if strings.TrimSpace(have) == "" {
		if _, err := kindnode.Run(ctx, cp, strings.NewReader(string(crd)), "kubectl", "--kubeconfig=/etc/kubernetes/admin.conf", "apply", "-f", "-"); err != nil {
			return fmt.Errorf("CRD %s: %w", nadCRDName, err)
		}
		fmt.Fprintf(out, "CRD %s created\n", nadCRDName)
	}
	if _, err := kubectl(ctx, cp, "wait", "--for=condition=Established", "--timeout=60s", "crd/"+nadCRDName); err != nil {
		return fmt.Errorf("CRD %s: %w", nadCRDName, err)
	}
	return nil
}

// tokenRequest is the part of `kubectl create token -o json` read here.
type tokenRequest struct {
	Status struct {
		Token               string `json:"token"`
		ExpirationTimestamp string `json:"expirationTimestamp"`
	} `json:"status"`
}

// pluginCredentials applies the plugin's RBAC, requests a token for its
// ServiceAccount and renders the kubeconfig the nodes get; it returns the
// token's expiry too.
func pluginCredentials(ctx context.Context, central *ovnNode) (string, string, error) {
	if _, err := kindnode.Run(ctx, central.kn, strings.NewReader(pluginRBAC), "kubectl", "--kubeconfig=/etc/kubernetes/admin.conf", "apply", "-f", "-"); err != nil {
		return "", "", fmt.Errorf("RBAC of nqos-cni: %w", err)
	}
	raw, err := kubectl(ctx, central.kn, "create", "token", pluginAccount, "-n", pluginNamespace, "--duration="+pluginTokenLife, "-o", "json")
	if err != nil {
		return "", "", fmt.Errorf("token of ServiceAccount %s/%s: %w", pluginNamespace, pluginAccount, err)
	}
	var tr tokenRequest
	if err := json.Unmarshal([]byte(raw), &tr); err != nil || tr.Status.Token == "" {
		return "", "", fmt.Errorf("token of ServiceAccount %s/%s: no token in %q (%v)", pluginNamespace, pluginAccount, raw, err)
	}
	ca, err := kindnode.Run(ctx, central.kn, nil, "cat", "/etc/kubernetes/pki/ca.crt")
	if err != nil {
		return "", "", fmt.Errorf("cluster CA: %w", err)
	}
	server := "https://" + central.internal + ":" + apiServerPort
	return pluginKubeconfigText(server, []byte(ca), tr.Status.Token), tr.Status.ExpirationTimestamp, nil
}

// pluginKubeconfigText is a kubeconfig for the token against server,
// trusting ca.
func pluginKubeconfigText(server string, ca []byte, token string) string {
	return fmt.Sprintf(`apiVersion: v1
kind: Config
clusters:
- name: nqos
  cluster:
    server: %s
    certificate-authority-data: %s
users:
- name: %s
  user:
    token: %s
contexts:
- name: nqos
  context:
    cluster: nqos
    user: %s
current-context: nqos
`, server, base64.StdEncoding.EncodeToString(ca), pluginAccount, token, pluginAccount)
}

// installOnNode writes the binary and the kubeconfig, then the conflist
// naming the plugin, and checks both from the node.
func installOnNode(ctx context.Context, n ovnNode, bin []byte, kubeconfig string) error {
	steps := []struct {
		what  string
		stdin string
		sh    string
	}{
		{"nqos-cni binary", string(bin), "mkdir -p /opt/cni/bin && cat > " + pluginPath + ".new && chmod 0755 " + pluginPath + ".new && mv " + pluginPath + ".new " + pluginPath},
		{"nqos-cni kubeconfig", kubeconfig, "mkdir -p /etc/cni/net.d/nqos-cni.d && umask 077 && cat > " + pluginKubeconfig},
		{"CNI config", conflist(n.podCIDR, pluginEntry()), "cat > " + conflistPath + ".new && mv " + conflistPath + ".new " + conflistPath},
	}
	for _, st := range steps {
		if _, err := kindnode.Run(ctx, n.kn, strings.NewReader(st.stdin), "sh", "-c", st.sh); err != nil {
			return fmt.Errorf("%s on node %s: %w", st.what, n.name, err)
		}
	}
	if _, err := kindnode.Run(ctx, n.kn, strings.NewReader("{}"), "env", "CNI_COMMAND=VERSION", pluginPath); err != nil {
		return fmt.Errorf("nqos-cni on node %s: %w", n.name, err)
	}
	// The binding may take a moment to reach the authorizer.
	return poll(ctx, "nqos-cni's kubeconfig allowed to get pods from node "+n.name, func() (bool, string, error) {
		ans, err := kindnode.Run(ctx, n.kn, nil, "kubectl", "--kubeconfig="+pluginKubeconfig, "auth", "can-i", "get", "pods", "-n", "default")
		ans = strings.TrimSpace(ans)
		return err == nil && ans == "yes", fmt.Sprintf("%q %v", ans, err), nil
	})
}
