package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
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
