package manifests

import (
	"fmt"
	"net/netip"
	"strings"

	udnv1 "github.com/nqos/nqos/api/udn/v1"
)

// DecodeCUDN decodes and validates a localnet ClusterUserDefinedNetwork:
// role Secondary, a physicalNetworkName, an access VLAN, and ipam mode
// Disabled (ipamless), DHCP (ipam type DHCP) or subnets.
func DecodeCUDN(o *Object) (*udnv1.ClusterUserDefinedNetwork, error) {
	if o.APIVersion != udnv1.APIVersion() {
		return nil, o.errf("apiVersion", "%q, want %s", o.APIVersion, udnv1.APIVersion())
	}
	if o.Namespace != "" {
		return nil, o.errf("metadata.namespace", "%q: a ClusterUserDefinedNetwork is cluster-scoped", o.Namespace)
	}
	var c udnv1.ClusterUserDefinedNetwork
	if err := o.into(&c); err != nil {
		return nil, err
	}
	spec, _ := o.Raw["spec"].(map[string]any)
	if _, ok := spec["namespaceSelector"]; !ok {
		return nil, o.errf("spec.namespaceSelector", "required")
	}
	ln := c.Spec.Network.Localnet
	switch {
	case c.Spec.Network.Topology != "Localnet":
		return nil, o.errf("spec.network.topology", "%q: the testbed builds Localnet networks only", c.Spec.Network.Topology)
	case ln == nil:
		return nil, o.errf("spec.network.localnet", "required for topology Localnet")
	case ln.Role != "Secondary":
		return nil, o.errf("spec.network.localnet.role", "%q: a localnet network is Secondary", ln.Role)
	case ln.PhysicalNetworkName == "":
		return nil, o.errf("spec.network.localnet.physicalNetworkName", "required (the NNCP bridge-mapping's localnet)")
	case ln.MTU < 0 || ln.MTU > 9000:
		return nil, o.errf("spec.network.localnet.mtu", "%d out of range 576..9000", ln.MTU)
	}
	if err := checkVLAN(o, ln.VLAN); err != nil {
		return nil, err
	}
	if err := checkIPAM(o, ln); err != nil {
		return nil, err
	}
	return &c, nil
}

func checkVLAN(o *Object, v *udnv1.VLAN) error {
	switch {
	case v == nil:
		return nil
	case v.Mode != "Access":
		return o.errf("spec.network.localnet.vlan.mode", "%q: only Access is supported (OVN-Kubernetes has no VLAN trunking)", v.Mode)
	case v.Access == nil:
		return o.errf("spec.network.localnet.vlan.access", "required for mode Access")
	case v.Access.ID < 1 || v.Access.ID > 4094:
		return o.errf("spec.network.localnet.vlan.access.id", "%d out of range 1..4094", v.Access.ID)
	}
	return nil
}

func checkIPAM(o *Object, ln *udnv1.Localnet) error {
	const f = "spec.network.localnet.ipam"
	mode, typ := "", ""
	if ln.IPAM != nil {
		mode, typ = ln.IPAM.Mode, ln.IPAM.Type
	}
	switch {
	case typ != "" && !strings.EqualFold(typ, "DHCP"):
		return o.errf(f+".type", "%q, want DHCP", typ)
	case mode != "" && mode != "Disabled" && mode != "Enabled":
		return o.errf(f+".mode", "%q, want Disabled or Enabled", mode)
	case typ != "" && len(ln.Subnets) > 0:
		return o.errf(f+".type", "DHCP and spec.network.localnet.subnets are mutually exclusive")
	case mode == "Disabled" && len(ln.Subnets) > 0:
		return o.errf("spec.network.localnet.subnets", "set with ipam mode Disabled")
	case mode == "Enabled" && len(ln.Subnets) == 0:
		return o.errf("spec.network.localnet.subnets", "required with ipam mode Enabled")
	case mode == "" && typ == "" && len(ln.Subnets) == 0:
		return o.errf(f+".mode", "required without subnets: Disabled (ipamless) or type DHCP")
	}
	for i, s := range ln.Subnets {
		if _, err := netip.ParsePrefix(s); err != nil {
			return o.errf(fmt.Sprintf("spec.network.localnet.subnets[%d]", i), "%q is not a CIDR", s)
		}
	}
	return nil
}
