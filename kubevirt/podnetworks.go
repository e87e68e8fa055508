package kubevirt

import (
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strings"
)

// PodAddrs are what ovnkube's IPAM gave a pod on one NAD, as its
// k8s.ovn.org/pod-networks entry says: the MAC and at most one address
// (CIDR, with the subnet's prefix length) per family.
type PodAddrs struct {
	MAC        string
	IPv4, IPv6 string
}

// IPs are the addresses without prefix length, IPv4 first, as an LSP's
// addresses column lists them after the MAC.
func (p PodAddrs) IPs() []string {
	var out []string
	for _, c := range []string{p.IPv4, p.IPv6} {
		if c != "" {
			out = append(out, prefixAddr(c))
		}
	}
	return out
}

// ErrNoPodNetwork is ParsePodNetworks' error when the annotation is
// absent or has no entry for the NAD (yet: ovnkube annotates each network
// as its controller handles the pod).
var ErrNoPodNetwork = errors.New("no pod-networks entry")

// ParsePodNetworks reads the entry of NAD nad ("namespace/name") in the
// value of a pod's k8s.ovn.org/pod-networks annotation. An empty value or
// no entry for the NAD is ErrNoPodNetwork; an entry without addresses, an address that is no CIDR, two addresses
// of one family or a MAC that is no unicast Ethernet address are errors:
// on a network with subnets ovnkube writes one address per subnet.
func ParsePodNetworks(value, nad string) (PodAddrs, error) {
	if strings.TrimSpace(value) == "" {
		return PodAddrs{}, fmt.Errorf("%s: empty: %w", PodNetworksAnnotation, ErrNoPodNetwork)
	}
	var nets map[string]podNetwork
	if err := json.Unmarshal([]byte(value), &nets); err != nil {
		return PodAddrs{}, fmt.Errorf("%s: %w", PodNetworksAnnotation, err)
	}
	e, ok := nets[nad]
	if !ok {
		return PodAddrs{}, fmt.Errorf("%s: NAD %s: %w", PodNetworksAnnotation, nad, ErrNoPodNetwork)
	}
	hw, err := net.ParseMAC(e.MACAddress)
	if err != nil || len(hw) != 6 || hw[0]&1 == 1 {
		return PodAddrs{}, fmt.Errorf("%s[%s].mac_address %q: want a unicast Ethernet MAC", PodNetworksAnnotation, nad, e.MACAddress)
	}
	addrs := e.IPAddresses
	if len(addrs) == 0 && e.IPAddress != "" {
		addrs = []string{e.IPAddress}
	}
	if len(addrs) == 0 {
		return PodAddrs{}, fmt.Errorf("%s[%s]: no ip_addresses", PodNetworksAnnotation, nad)
	}
	out := PodAddrs{MAC: hw.String()}
	for _, s := range addrs {
		p, err := netip.ParsePrefix(s)
		if err != nil {
			return PodAddrs{}, fmt.Errorf("%s[%s].ip_addresses %q: %w", PodNetworksAnnotation, nad, s, err)
		}
		slot := &out.IPv6
		if p.Addr().Is4() {
			slot = &out.IPv4
		}
		if *slot != "" {
			return PodAddrs{}, fmt.Errorf("%s[%s].ip_addresses %v: two addresses of one family", PodNetworksAnnotation, nad, addrs)
		}
		*slot = p.String()
	}
	return out, nil
}

// lspAddrsMatch reports whether an LSP's addresses column ("MAC ip ...",
// as ovn-nbctl --bare prints it) holds exactly the pod's MAC and IPs.
func lspAddrsMatch(column string, p PodAddrs) bool {
	f := strings.Fields(column)
	if len(f) == 0 || !strings.EqualFold(f[0], p.MAC) {
		return false
	}
	want := map[string]bool{}
	for _, ip := range p.IPs() {
		want[ip] = true
	}
	if len(f)-1 != len(want) {
		return false
	}
	for _, ip := range f[1:] {
		a, err := netip.ParseAddr(ip)
		if err != nil || !want[a.String()] {
			return false
		}
	}
	return true
}
