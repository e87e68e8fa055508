package kubevirt

import (
	"errors"
	"strings"
	"testing"
)

// An annotation as ovnkube writes it for a pod on the default network and
// on a dual-stack localnet with subnets.
const ovnkubePodNetworks = `{"default":{"ip_addresses":["10.244.1.5/24"],"mac_address":"0a:58:0a:f4:01:05","ip_address":"10.244.1.5/24","role":"primary"},` +
	`"apps/tenant-ipam":{"ip_addresses":["10.70.1.1/16","fd00:70::1:1/64"],"mac_address":"02:00:00:00:00:01","ip_address":"10.70.1.1/16","tunnel_id":3,"role":"secondary"}}`

func TestParsePodNetworks(t *testing.T) {
	got, err := ParsePodNetworks(ovnkubePodNetworks, "apps/tenant-ipam")
	if err != nil {
		t.Fatal(err)
	}
	want := PodAddrs{MAC: "02:00:00:00:00:01", IPv4: "10.70.1.1/16", IPv6: "fd00:70::1:1/64"}
	if got != want {
		t.Fatalf("got %+v, want %+v", got, want)
	}
	if ips := got.IPs(); strings.Join(ips, " ") != "10.70.1.1 fd00:70::1:1" {
		t.Fatalf("IPs = %v", ips)
	}
	// ip_address alone (an older writer), IPv6 only
	got, err = ParsePodNetworks(`{"a/b":{"mac_address":"02:00:00:00:00:02","ip_address":"fd00::7/64"}}`, "a/b")
	if err != nil || got != (PodAddrs{MAC: "02:00:00:00:00:02", IPv6: "fd00::7/64"}) {
		t.Fatalf("ip_address only: %+v, %v", got, err)
	}
}

func TestParsePodNetworksErrors(t *testing.T) {
	for _, c := range []struct {
		name, value, want string
		missing           bool
	}{
		{name: "empty", value: "", want: "empty", missing: true},
		{name: "other NAD only", value: ovnkubePodNetworks, want: "NAD apps/other", missing: true},
		{name: "not JSON", value: `{"apps/other":`, want: "unexpected end of JSON input"},
		{name: "no addresses", value: `{"apps/other":{"mac_address":"02:00:00:00:00:01","role":"secondary"}}`, want: "no ip_addresses"},
		{name: "no CIDR", value: `{"apps/other":{"mac_address":"02:00:00:00:00:01","ip_addresses":["10.70.1.1"]}}`, want: `ip_addresses "10.70.1.1"`},
		{name: "two IPv4", value: `{"apps/other":{"mac_address":"02:00:00:00:00:01","ip_addresses":["10.70.1.1/16","10.70.1.2/16"]}}`, want: "two addresses of one family"},
		{name: "multicast MAC", value: `{"apps/other":{"mac_address":"01:00:5e:00:00:01","ip_addresses":["10.70.1.1/16"]}}`, want: "unicast Ethernet MAC"},
		{name: "no MAC", value: `{"apps/other":{"ip_addresses":["10.70.1.1/16"]}}`, want: "mac_address"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := ParsePodNetworks(c.value, "apps/other")
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("err = %v, want one naming %q", err, c.want)
			}
			if errors.Is(err, ErrNoPodNetwork) != c.missing {
				t.Fatalf("errors.Is(%v, ErrNoPodNetwork) = %t, want %t", err, !c.missing, c.missing)
			}
		})
	}
}

func TestLSPAddrsMatch(t *testing.T) {
	p := PodAddrs{MAC: "02:00:00:00:00:01", IPv4: "10.70.1.1/16", IPv6: "fd00:70::1:1/64"}
	for _, c := range []struct {
		column string
		want   bool
	}{
		{"02:00:00:00:00:01 10.70.1.1 fd00:70::1:1", true},
		{"02:00:00:00:00:01 fd00:70:0:0::1:1 10.70.1.1", true}, // order and IPv6 spelling do not matter
		{"02:00:00:00:00:01 10.70.1.1", false},                 // a family missing
		{"02:00:00:00:00:01 10.70.1.2 fd00:70::1:1", false},    // another address
		{"02:00:00:00:00:02 10.70.1.1 fd00:70::1:1", false},    // another MAC
		{"02:00:00:00:00:01 10.70.1.1 fd00:70::1:1 10.70.1.9", false},
		{"02:00:00:00:00:01", false}, // MAC only: an ipamless port
		{"", false},
	} {
		if got := lspAddrsMatch(c.column, p); got != c.want {
			t.Errorf("lspAddrsMatch(%q) = %t, want %t", c.column, got, c.want)
		}
	}
}
