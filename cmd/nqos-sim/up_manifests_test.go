package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nqos/nqos/topo/localnet"
)

// TestLoadManifests reads the shipped OpenShift example the README's
// quick start boots from.
func TestLoadManifests(t *testing.T) {
	d, err := loadManifests("../../examples/okep-localnet")
	if err != nil {
		t.Fatal(err)
	}
	if len(d.set.VMs) != 3 || len(d.set.NetworkQoS) != 3 || len(d.set.NNCPs) != 1 || len(d.set.CUDNs) != 1 {
		t.Fatalf("set: %d VMs, %d NetworkQoS, %d NNCPs, %d CUDNs; want 3, 3, 1, 1", len(d.set.VMs), len(d.set.NetworkQoS), len(d.set.NNCPs), len(d.set.CUDNs))
	}
	if got := d.set.IgnoredRefs(); len(got) != 1 || !strings.HasPrefix(got[0], "Service vms/payments") {
		t.Fatalf("ignored = %v, want the Service", got)
	}
	nets, err := d.networks()
	if err != nil {
		t.Fatal(err)
	}
	if len(nets) != 1 || nets[0].Name != "cluster_udn_tenant-blue" || nets[0].VLAN != 100 || nets[0].PhysicalNetworkName != "provider-network" ||
		len(nets[0].NADs) != 1 || nets[0].NADs[0] != "vms/tenant-blue" {
		t.Fatalf("networks = %+v", nets)
	}
	placed, err := d.set.Place([]string{"node1", "node2"})
	if err != nil {
		t.Fatal(err)
	}
	for i, want := range []string{"node1", "node2", "node1"} {
		if placed[i].Node != want {
			t.Errorf("%s on %q, want %s", placed[i].VM.Name, placed[i].Node, want)
		}
	}
}

// TestLoadManifestsInvalid names the file, the object and the field.
func TestLoadManifestsInvalid(t *testing.T) {
	dir := t.TempDir()
	bad := "apiVersion: kubevirt.io/v1\nkind: VirtualMachine\nmetadata: {name: v, namespace: vms}\nspec:\n  runStrategy: Sometimes\n  template: {spec: {}}\n"
	if err := os.WriteFile(filepath.Join(dir, "vm.yaml"), []byte(bad), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := loadManifests(dir)
	want := filepath.Join(dir, "vm.yaml") + `:1: VirtualMachine vms/v: spec.runStrategy: "Sometimes"`
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("err = %v, want %q", err, want)
	}
	if _, err := loadManifests(t.TempDir()); err == nil || !strings.Contains(err.Error(), "no *.yaml") {
		t.Fatalf("empty dir: err = %v", err)
	}
}

// TestRoutedFabricOKEP: the OKEP example's VMs route through 10.10.0.1
// and fd00:10::1, so `up -f` starts that router with the default hosts
// (10.20.0.0/16, fd00:20::/64, off-link for the VMs) behind it.
func TestRoutedFabricOKEP(t *testing.T) {
	routers, hosts, err := routedOf(t, "../../examples/okep-localnet")
	if err != nil {
		t.Fatal(err)
	}
	want := localnet.RouterSpec{Name: "gw1", Network: "cluster_udn_tenant-blue", IPv4: "10.10.0.1/16", IPv6: "fd00:10::1/64", SiteIPv4: "10.20.0.1/16", SiteIPv6: "fd00:20::1/64"}
	if len(routers) != 1 || routers[0] != want {
		t.Fatalf("routers = %+v, want [%+v]", routers, want)
	}
	for _, h := range hosts {
		if h.Router != "gw1" {
			t.Errorf("host %s (%s) not behind gw1", h.Name, h.IPv4)
		}
	}
	got := describeRouters(routers, hosts)
	if len(got) != 1 || got[0] != "router gw1 on cluster_udn_tenant-blue: gateway 10.10.0.1/16 fd00:10::1/64 (the VMs' cloud-init gateways), site 10.20.0.1/16 fd00:20::1/64: backup, monitor, peer" {
		t.Fatalf("describe = %q", got)
	}
}

// TestRoutedFabricOnLink: VMs without gateways start no router; two
// gateways on one network are refused naming both VMs.
func TestRoutedFabricOnLink(t *testing.T) {
	dir := t.TempDir()
	src, err := os.ReadFile("../../examples/okep-localnet/30-vms.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"00-namespace.yaml", "10-nncp.yaml", "20-cudn.yaml"} {
		b, err := os.ReadFile(filepath.Join("../../examples/okep-localnet", f))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, f), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	vms := filepath.Join(dir, "30-vms.yaml")
	for _, tc := range []struct{ text, want string }{
		{strings.NewReplacer("                gateway4: 10.10.0.1\n", "", "                gateway6: \"fd00:10::1\"\n", "").Replace(string(src)), ""},
		{strings.Replace(string(src), "gateway4: 10.10.0.1\n", "gateway4: 10.10.0.254\n", 1),
			"network cluster_udn_tenant-blue: VirtualMachine vms/prod-1 routes through 10.10.0.254/16, VirtualMachine vms/staging-1 through 10.10.0.1/16"},
	} {
		if err := os.WriteFile(vms, []byte(tc.text), 0o644); err != nil {
			t.Fatal(err)
		}
		routers, hosts, err := routedOf(t, dir)
		switch {
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("err = %v, want %q", err, tc.want)
		case tc.want == "" && (err != nil || len(routers) != 0 || hosts[0].Router != ""):
			t.Errorf("on-link: routers %+v hosts %+v err %v", routers, hosts, err)
		}
	}
}

// routedOf derives the routers and hosts of a manifest directory.
func routedOf(t *testing.T, dir string) ([]localnet.RouterSpec, []localnet.HostSpec, error) {
	t.Helper()
	d, err := loadManifests(dir)
	if err != nil {
		t.Fatal(err)
	}
	nets, err := d.networks()
	if err != nil {
		t.Fatal(err)
	}
	return d.routedFabric(nets)
}
