package cni

import (
	"encoding/json"
	"fmt"

	"github.com/containernetworking/cni/pkg/types"
	"github.com/containernetworking/cni/pkg/version"
)

// Defaults of the plugin's configuration.
const (
	DefaultBridge = "br-int"
	DefaultOVSDB  = "unix:/run/openvswitch/db.sock"
	DefaultVsctl  = "ovs-vsctl"
)

// NetConf is the plugin's entry in the conflist.
type NetConf struct {
	types.PluginConf
	// Kubeconfig is the file the plugin reads pods and NADs with.
	Kubeconfig string `json:"kubeconfig"`
	// OVSDB is the ovsdb-server of the node's Open vSwitch.
	OVSDB string `json:"ovsDB,omitempty"`
	// Bridge is the integration bridge the node ends join.
	Bridge string `json:"bridge,omitempty"`
	// Vsctl is the ovs-vsctl program (a name on PATH or a path).
	Vsctl string `json:"vsctl,omitempty"`
}

// parseConf decodes the configuration on stdin, fills the defaults and
// parses the previous result, if any.
func parseConf(stdin []byte) (*NetConf, error) {
	c := &NetConf{}
	if err := json.Unmarshal(stdin, c); err != nil {
		return nil, fmt.Errorf("nqos-cni config: %w", err)
	}
	if c.Kubeconfig == "" {
		return nil, fmt.Errorf("nqos-cni config %q: no kubeconfig", c.Name)
	}
	if c.OVSDB == "" {
		c.OVSDB = DefaultOVSDB
	}
	if c.Bridge == "" {
		c.Bridge = DefaultBridge
	}
	if c.Vsctl == "" {
		c.Vsctl = DefaultVsctl
	}
	if err := version.ParsePrevResult(&c.PluginConf); err != nil {
		return nil, fmt.Errorf("nqos-cni config %q: prevResult: %w", c.Name, err)
	}
	return c, nil
}

// podArgs are the CNI_ARGS the kubelet's runtime passes.
type podArgs struct {
	types.CommonArgs
	K8S_POD_NAMESPACE types.UnmarshallableString //nolint:revive // the CNI_ARGS key
	K8S_POD_NAME      types.UnmarshallableString //nolint:revive // the CNI_ARGS key
	K8S_POD_UID       types.UnmarshallableString //nolint:revive // the CNI_ARGS key
}

// podRef names the pod a sandbox belongs to.
type podRef struct {
	Namespace, Name, UID string
}

func (p podRef) String() string { return p.Namespace + "/" + p.Name }

// parsePodArgs reads the pod's namespace, name and UID from CNI_ARGS.
func parsePodArgs(args string) (podRef, error) {
	a := podArgs{}
	if err := types.LoadArgs(args, &a); err != nil {
		return podRef{}, fmt.Errorf("CNI_ARGS %q: %w", args, err)
	}
	p := podRef{Namespace: string(a.K8S_POD_NAMESPACE), Name: string(a.K8S_POD_NAME), UID: string(a.K8S_POD_UID)}
	if p.Namespace == "" || p.Name == "" {
		return podRef{}, fmt.Errorf("CNI_ARGS %q: K8S_POD_NAMESPACE and K8S_POD_NAME are required", args)
	}
	return p, nil
}
