package cni

import (
	"encoding/json"
	"fmt"
	"strings"

	nadv1 "github.com/nqos/nqos/api/nad/v1"
	udnv1 "github.com/nqos/nqos/api/udn/v1"
)

// OVN-Kubernetes' CNI type and the one topology the plugin plugs.
const (
	ovnCNIType       = "ovn-k8s-cni-overlay"
	topologyLocalnet = "localnet"
)

// Network is what the plugin takes from a localnet NAD config.
type Network struct {
	Name   string // the network name (config "name")
	MTU    int    // the interface MTU (config "mtu", default 1500)
	VLANID int    // config "vlanID" (0: none), recorded only
}

// ParseNAD checks that nad holds an OVN-Kubernetes localnet config for
// itself and returns its network; errors name the NAD and the config
// field at fault.
func ParseNAD(nad *nadv1.NetworkAttachmentDefinition) (Network, error) {
	id := nad.Namespace + "/" + nad.Name
	fail := func(field, format string, args ...any) (Network, error) {
		return Network{}, fmt.Errorf("NAD %s: spec.config%s: %s", id, field, fmt.Sprintf(format, args...))
	}
	if strings.TrimSpace(nad.Spec.Config) == "" {
		return fail("", "empty")
	}
	var c udnv1.NetConf
	if err := json.Unmarshal([]byte(nad.Spec.Config), &c); err != nil {
		return Network{}, fmt.Errorf("NAD %s: spec.config: %w", id, err)
	}
	switch {
	case c.Type != ovnCNIType:
		return fail(".type", "%q: want %s", c.Type, ovnCNIType)
	case c.Topology != topologyLocalnet:
		return fail(".topology", "%q: want %s", c.Topology, topologyLocalnet)
	case c.Name == "":
		return fail(".name", "empty: want the network name")
	case c.NetAttachDefName != id:
		return fail(".netAttachDefName", "%q: want %q", c.NetAttachDefName, id)
	case c.MTU < 0 || c.MTU > 65535 || (c.MTU > 0 && c.MTU < 68):
		return fail(".mtu", "%d: want 68 to 65535", c.MTU)
	case c.VLANID < 0 || c.VLANID > 4094:
		return fail(".vlanID", "%d: want 0 to 4094", c.VLANID)
	}
	n := Network{Name: c.Name, MTU: c.MTU, VLANID: c.VLANID}
	if n.MTU == 0 {
		n.MTU = udnv1.DefaultLocalnetMTU
	}
	return n, nil
}
