package kubevirt

import (
	"net/netip"
	"reflect"
	"strings"
	"testing"

	"github.com/nqos/nqos/scenarios/manifests"
)

func TestFromManifest(t *testing.T) {
	vm := &manifests.VirtualMachine{Name: "a", Namespace: "vms", Labels: map[string]string{"tier": "gold"}, NICs: []manifests.NIC{
		{Name: "n1", NAD: "vms/blue", MAC: "02:00:00:00:00:01", IPv4: "10.0.0.1/24",
			Routes: []manifests.Route{{To: netip.MustParsePrefix("10.20.0.0/16"), Via: netip.MustParseAddr("10.0.0.254")}}},
		{Name: "n2", Index: 1, NAD: "vms/green", DHCP: true},
	}}
	got, err := FromManifest(manifests.Resolved{VM: vm, Node: "node1"}, 4)
	if err != nil {
		t.Fatal(err)
	}
	want := []Interface{{NAD: "vms/blue", MAC: "02:00:00:00:00:01", IPv4: "10.0.0.1/24",
		Routes: []Route{{Dst: netip.MustParsePrefix("10.20.0.0/16"), Via: netip.MustParseAddr("10.0.0.254")}}},
		{NAD: "vms/green", MAC: "0a:58:00:00:00:06", DHCP: true}}
	if got.Node != "node1" || got.Labels["tier"] != "gold" || !reflect.DeepEqual(got.Interfaces, want) {
		t.Fatalf("VM = %+v, want interfaces %+v on node1", got, want)
	}
	if _, err := FromManifest(manifests.Resolved{VM: vm, Why: "no mapping"}, 0); err == nil || !strings.Contains(err.Error(), "VirtualMachine vms/a does not start: no mapping") {
		t.Fatalf("unplaced VM: err = %v", err)
	}
}

func TestGeneratedMAC(t *testing.T) {
	if got := GeneratedMAC(0); got != "0a:58:00:00:00:01" {
		t.Fatalf("GeneratedMAC(0) = %s", got)
	}
	if got := GeneratedMAC(255); got != "0a:58:00:00:01:00" {
		t.Fatalf("GeneratedMAC(255) = %s", got)
	}
	if MACOr("02:00:00:00:00:09", 3) != "02:00:00:00:00:09" {
		t.Fatal("MACOr ignores a given MAC")
	}
}
