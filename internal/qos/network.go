package qos

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/netip"
	"strings"

	nadv1 "github.com/nqos/nqos/api/nad/v1"
)

// ovnCNIType is the CNI plugin type of OVN-Kubernetes network attachments.
const ovnCNIType = "ovn-k8s-cni-overlay"

// networkNameAnnotation overrides the network name of a NAD (upstream sets
// it on NADs rendered from (C)UDNs).
const networkNameAnnotation = "k8s.ovn.org/network-name"

// errNotOVN marks a NAD that is not an OVN-Kubernetes attachment; such NADs
// are skipped silently by network selection.
var errNotOVN = errors.New("not an " + ovnCNIType + " attachment")

// Network is an OVN-Kubernetes user-defined network resolved from its NADs.
type Network struct {
	Name, Topology, Switch, PhysicalNetworkName, IPAMType string
	VLAN, MTU                                             int
	Subnets                                               []string
	// NADs are the "ns/name" keys of the NADs of this network (sorted).
	NADs []string
}

// DiscoverablePodIPs is upstream's DoesNetworkHaveDiscoverablePodIPs: the
// network assigns IPs (has subnets) or learns them (ipam.type dhcp).
func (n Network) DiscoverablePodIPs() bool {
	return len(n.Subnets) > 0 || strings.EqualFold(n.IPAMType, "dhcp")
}

// families returns the IP families of pod addresses on the network:
// from the subnets, v4 for DHCP IPAM (OKEP-6224 is IPv4 only), both when
// unknown.
func (n Network) families() []string {
	var v4, v6 bool
	for _, s := range n.Subnets {
		p, err := parseSubnet(s)
		if err != nil {
			continue
		}
		v4 = v4 || p.Addr().Is4()
		v6 = v6 || p.Addr().Is6()
	}
	switch {
	case v4 && v6:
		return []string{"v4", "v6"}
	case v4:
		return []string{"v4"}
	case v6:
		return []string{"v6"}
	case strings.EqualFold(n.IPAMType, "dhcp"):
		return []string{"v4"}
	}
	return []string{"v4", "v6"}
}

// netConf is the part of an OVN-Kubernetes CNI config nqos reads.
type netConf struct {
	Name                string `json:"name"`
	Type                string `json:"type"`
	Topology            string `json:"topology"`
	Subnets             string `json:"subnets"`
	PhysicalNetworkName string `json:"physicalNetworkName"`
	VLANID              int    `json:"vlanID"`
	MTU                 int    `json:"mtu"`
	NetAttachDefName    string `json:"netAttachDefName"`
	IPAM                *struct {
		Type string `json:"type"`
	} `json:"ipam"`
	Plugins []json.RawMessage `json:"plugins"`
}

// ParseNAD reads the network a NAD attaches to from its CNI config. A NAD
// of another CNI type returns an error wrapping errNotOVN.
func ParseNAD(nad *nadv1.NetworkAttachmentDefinition) (Network, error) {
	key := nad.Namespace + "/" + nad.Name
	conf, err := decodeNetConf(nad.Spec.Config)
	if err != nil {
		return Network{}, fmt.Errorf("NAD %s: spec.config: %w", key, err)
	}
	n := Network{
		Name:                conf.Name,
		Topology:            strings.ToLower(conf.Topology),
		PhysicalNetworkName: conf.PhysicalNetworkName,
		VLAN:                conf.VLANID,
		MTU:                 conf.MTU,
		NADs:                []string{key},
	}
	if v := nad.Annotations[networkNameAnnotation]; v != "" {
		n.Name = v
	}
	if conf.IPAM != nil {
		n.IPAMType = strings.ToLower(conf.IPAM.Type)
	}
	if err := fillSubnets(&n, conf.Subnets); err != nil {
		return Network{}, fmt.Errorf("NAD %s: spec.config: %w", key, err)
	}
	if n.Name == "" {
		return Network{}, fmt.Errorf("NAD %s: spec.config: missing network name", key)
	}
	n.Switch = SwitchName(n.Name, n.Topology)
	return n, nil
}

// decodeNetConf decodes a single CNI config or the OVN plugin of a
// conflist.
func decodeNetConf(config string) (netConf, error) {
	var conf netConf
	if err := json.Unmarshal([]byte(config), &conf); err != nil {
		return netConf{}, fmt.Errorf("invalid CNI config JSON: %w", err)
	}
	if conf.Type == "" && len(conf.Plugins) > 0 {
		name := conf.Name
		for _, raw := range conf.Plugins {
			var p netConf
			if err := json.Unmarshal(raw, &p); err != nil {
				return netConf{}, fmt.Errorf("invalid CNI plugin JSON: %w", err)
			}
			if p.Type == ovnCNIType {
				if p.Name == "" {
					p.Name = name
				}
				return p, nil
			}
		}
	}
	if conf.Type != ovnCNIType {
		return netConf{}, fmt.Errorf("type %q: %w", conf.Type, errNotOVN)
	}
	return conf, nil
}

// fillSubnets parses the comma-separated subnets of a NAD config. A
// layer3 subnet may carry a host-subnet length ("10.128.0.0/16/24").
func fillSubnets(n *Network, subnets string) error {
	for _, s := range strings.Split(subnets, ",") {
		s = strings.TrimSpace(s)
		if s == "" {
			continue
		}
		if _, err := parseSubnet(s); err != nil {
			return fmt.Errorf("subnets: %w", err)
		}
		n.Subnets = append(n.Subnets, s)
	}
	if len(n.Subnets) > 0 && n.IPAMType == "dhcp" {
		return errors.New("subnets and ipam.type dhcp are mutually exclusive")
	}
	return nil
}

// parseSubnet parses "cidr" or layer3's "cidr/hostlen".
func parseSubnet(s string) (netip.Prefix, error) {
	if strings.Count(s, "/") == 2 {
		s = s[:strings.LastIndex(s, "/")]
	}
	p, err := netip.ParsePrefix(s)
	if err != nil {
		return netip.Prefix{}, fmt.Errorf("invalid subnet %q", s)
	}
	return p, nil
}
