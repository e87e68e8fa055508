package localnet

import (
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"

	nadv1 "github.com/nqos/nqos/api/nad/v1"
	udnv1 "github.com/nqos/nqos/api/udn/v1"
	"github.com/nqos/nqos/internal/qos"
)

// Network is a localnet network of the testbed: the compiler's view of it
// plus the NAD (and CUDN) objects it came from, created in the Kubernetes
// API when the testbed runs one.
type Network struct {
	qos.Network
	NADObjects []*nadv1.NetworkAttachmentDefinition
	CUDN       *udnv1.ClusterUserDefinedNetwork
	// Namespaces are the manifests' Namespace objects of the NADs'
	// namespaces (created with their labels; others are created bare).
	Namespaces []*corev1.Namespace
}

// LocalnetPort is the name of the network's localnet port, as ovnkube
// names it: the switch prefix plus "ovn_localnet_port".
func (n Network) LocalnetPort() string {
	return strings.TrimSuffix(n.Switch, "ovn_localnet_switch") + "ovn_localnet_port"
}

// DefaultNetworkManifest is the OKEP-6815 example NAD: ipamless localnet
// vms/tenant-blue on physnet, VLAN 100.
const DefaultNetworkManifest = `apiVersion: k8s.cni.cncf.io/v1
kind: NetworkAttachmentDefinition
metadata:
  name: tenant-blue
  namespace: vms
  labels:
    nqos-network: tenant-blue
spec:
  config: '{"cniVersion":"1.0.0","name":"tenant-blue","type":"ovn-k8s-cni-overlay","topology":"localnet","physicalNetworkName":"physnet","vlanID":100,"netAttachDefName":"vms/tenant-blue"}'
`

// DefaultNetwork is the network of DefaultNetworkManifest.
func DefaultNetwork() (Network, error) {
	ns, err := NetworksFromManifests(strings.NewReader(DefaultNetworkManifest), "default network")
	if err != nil {
		return Network{}, err
	}
	return ns[0], nil
}

// NetworksFromManifests decodes NAD, ClusterUserDefinedNetwork and
// Namespace documents (a CUDN is rendered into one NAD per selected
// Namespace of the same stream) into localnet networks sorted by name.
func NetworksFromManifests(r io.Reader, source string) ([]Network, error) {
	in, err := qos.DecodeManifests(r, source)
	if err != nil {
		return nil, err
	}
	return NetworksFromInput(in, source)
}

// NetworksFromInput builds the localnet networks of decoded manifests.
func NetworksFromInput(in qos.Input, source string) ([]Network, error) {
	nads := append([]*nadv1.NetworkAttachmentDefinition(nil), in.NADs...)
	owner := map[string]*udnv1.ClusterUserDefinedNetwork{}
	for _, c := range in.CUDNs {
		rendered, err := renderCUDN(c, in.Namespaces)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", source, err)
		}
		for _, nad := range rendered {
			owner[nad.Namespace+"/"+nad.Name] = c
		}
		nads = append(nads, rendered...)
	}
	byName := map[string]*Network{}
	for _, nad := range nads {
		key := nad.Namespace + "/" + nad.Name
		n, err := qos.ParseNAD(nad)
		if err != nil {
			return nil, fmt.Errorf("%s: NAD %s: %w", source, key, err)
		}
		if n.Topology != "localnet" {
			return nil, fmt.Errorf("%s: NAD %s: topology %q: the testbed builds localnet networks only", source, key, n.Topology)
		}
		if err := mergeNetwork(byName, n, nad, owner[key]); err != nil {
			return nil, fmt.Errorf("%s: NAD %s: %w", source, key, err)
		}
	}
	out := make([]Network, 0, len(byName))
	for _, n := range byName {
		sort.Strings(n.NADs)
		for _, ns := range in.Namespaces {
			if slices.ContainsFunc(n.NADObjects, func(nad *nadv1.NetworkAttachmentDefinition) bool { return nad.Namespace == ns.Name }) {
				n.Namespaces = append(n.Namespaces, ns)
			}
		}
		out = append(out, *n)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	if len(out) == 0 {
		return nil, fmt.Errorf("%s: no NetworkAttachmentDefinition or ClusterUserDefinedNetwork found", source)
	}
	return out, nil
}

func mergeNetwork(byName map[string]*Network, n qos.Network, nad *nadv1.NetworkAttachmentDefinition, cudn *udnv1.ClusterUserDefinedNetwork) error {
	have, ok := byName[n.Name]
	if !ok {
		byName[n.Name] = &Network{Network: n, NADObjects: []*nadv1.NetworkAttachmentDefinition{nad}, CUDN: cudn}
		return nil
	}
	if have.PhysicalNetworkName != n.PhysicalNetworkName || have.VLAN != n.VLAN || have.IPAMType != n.IPAMType ||
		strings.Join(have.Subnets, ",") != strings.Join(n.Subnets, ",") {
		return fmt.Errorf("network %s: physicalNetworkName/vlanID/subnets/ipam differ from another NAD of the same network", n.Name)
	}
	have.NADs = append(have.NADs, n.NADs...)
	have.NADObjects = append(have.NADObjects, nad)
	return nil
}

// renderCUDN renders a localnet CUDN into one NAD per selected namespace
// as ovnkube's CUDN controller does (udnv1.RenderNADs).
func renderCUDN(c *udnv1.ClusterUserDefinedNetwork, nss []*corev1.Namespace) ([]*nadv1.NetworkAttachmentDefinition, error) {
	if c.Spec.Network.Topology != "Localnet" || c.Spec.Network.Localnet == nil {
		return nil, fmt.Errorf("ClusterUserDefinedNetwork %s: spec.network.topology %q: the testbed builds Localnet networks only", c.Name, c.Spec.Network.Topology)
	}
	labels := make(map[string]map[string]string, len(nss))
	for _, ns := range nss {
		labels[ns.Name] = ns.Labels
	}
	out, err := udnv1.RenderNADs(c, labels)
	if err != nil {
		return nil, err
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("ClusterUserDefinedNetwork %s: spec.namespaceSelector selects no Namespace of the manifests", c.Name)
	}
	for _, nad := range out {
		// No ovnkube runs to remove the protection finalizer.
		nad.Finalizers = nil
	}
	return out, nil
}

func ptrTrue() *bool { t := true; return &t }
