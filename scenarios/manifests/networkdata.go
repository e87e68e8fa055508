package manifests

import (
	"encoding/base64"
	"fmt"
	"net/netip"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"
)

// networkData is the part of a cloud-init network config version 2 the
// testbed applies: per ethernet its static addresses, dhcp4, gateway4,
// gateway6 and routes (to, via).
type networkData struct {
	Version   int                        `yaml:"version"`
	Ethernets map[string]networkEthernet `yaml:"ethernets"`
}

type networkEthernet struct {
	Match struct {
		MACAddress string `yaml:"macaddress"`
	} `yaml:"match"`
	Addresses []string `yaml:"addresses"`
	DHCP4     bool     `yaml:"dhcp4"`
	Gateway4  string   `yaml:"gateway4"`
	Gateway6  string   `yaml:"gateway6"`
	Routes    []struct {
		To  string `yaml:"to"`
		Via string `yaml:"via"`
	} `yaml:"routes"`
}

// applyNetworkData sets each NIC's addresses from the cloud-init volume;
// a NIC with no static address uses DHCP.
func (vm *VirtualMachine) applyNetworkData(vols []vmVolume) error {
	for i, v := range vols {
		ci, field := v.CloudInitNoCloud, fmt.Sprintf("spec.template.spec.volumes[%d].cloudInitNoCloud", i)
		if ci == nil {
			ci, field = v.CloudInitConfig, fmt.Sprintf("spec.template.spec.volumes[%d].cloudInitConfigDrive", i)
		}
		if ci == nil || (ci.NetworkData == "" && ci.NetworkDataBase64 == "") {
			continue
		}
		text := ci.NetworkData
		field += ".networkData"
		if text == "" {
			raw, err := base64.StdEncoding.DecodeString(ci.NetworkDataBase64)
			if err != nil {
				return vm.Object.errf(field+"Base64", "not base64: %v", err)
			}
			text = string(raw)
		}
		if err := vm.networkData(text, field); err != nil {
			return err
		}
	}
	for i := range vm.NICs {
		if vm.NICs[i].IPv4 == "" && vm.NICs[i].IPv6 == "" {
			vm.NICs[i].DHCP = true
		}
	}
	return nil
}

func (vm *VirtualMachine) networkData(text, field string) error {
	o := vm.Object
	var nd networkData
	if err := yaml.Unmarshal([]byte(text), &nd); err != nil {
		return o.errf(field, "not YAML: %v", err)
	}
	if nd.Version != 2 {
		return o.errf(field+".version", "%d: only cloud-init network config version 2 is read", nd.Version)
	}
	keys := make([]string, 0, len(nd.Ethernets))
	for k := range nd.Ethernets {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		eth := nd.Ethernets[k]
		p := field + ".ethernets." + k
		n := vm.nicFor(k, eth.Match.MACAddress)
		if n == nil {
			return o.errf(p, "matches no multus interface (name it eth<N> after the interface order, or match its macaddress)")
		}
		if err := setAddresses(o, p, n, eth); err != nil {
			return err
		}
		if err := setRoutes(o, p, n, eth); err != nil {
			return err
		}
	}
	return nil
}

// nicFor finds the NIC an ethernets entry configures: by match.macaddress,
// else by guest name.
func (vm *VirtualMachine) nicFor(key, mac string) *NIC {
	for i := range vm.NICs {
		n := &vm.NICs[i]
		if mac != "" && strings.EqualFold(n.MAC, mac) {
			return n
		}
		if mac == "" && n.GuestName() == key {
			return n
		}
	}
	return nil
}

func setAddresses(o *Object, p string, n *NIC, eth networkEthernet) error {
	for j, a := range eth.Addresses {
		pp := fmt.Sprintf("%s.addresses[%d]", p, j)
		pfx, err := netip.ParsePrefix(a)
		if err != nil {
			return o.errf(pp, "%q: want an address with prefix length, e.g. 10.10.10.14/24", a)
		}
		slot := &n.IPv6
		if pfx.Addr().Is4() {
			slot = &n.IPv4
		}
		if *slot != "" {
			return o.errf(pp, "%q: a second address of the family (the testbed configures one per family)", a)
		}
		*slot = pfx.String()
	}
	if eth.DHCP4 && n.IPv4 != "" {
		return o.errf(p+".dhcp4", "true together with a static IPv4 address")
	}
	n.DHCP = eth.DHCP4
	return nil
}
