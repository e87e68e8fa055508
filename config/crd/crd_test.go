package crd

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestManifestsAreTheFiles: the embedded manifests are config/crd's
// files, byte for byte, and there is at least the NetworkQoS CRD.
func TestManifestsAreTheFiles(t *testing.T) {
	got, err := Manifests()
	if err != nil {
		t.Fatal(err)
	}
	files, err := filepath.Glob("*.yaml")
	if err != nil || len(files) != len(got) {
		t.Fatalf("%d embedded, files %v (%v)", len(got), files, err)
	}
	for _, m := range got {
		data, err := os.ReadFile(filepath.Base(m.Name))
		if err != nil || !slices.Equal(data, m.Data) {
			t.Errorf("%s: embedded differs from the file (%v)", m.Name, err)
		}
	}
	if !slices.ContainsFunc(got, func(m Manifest) bool { return m.Name == "config/crd/k8s.ovn.org_networkqoses.yaml" }) {
		t.Error("no NetworkQoS CRD embedded")
	}
}

// TestKubeVirtCRDs: the three KubeVirt CRDs are embedded, each a
// CustomResourceDefinition of group kubevirt.io.
func TestKubeVirtCRDs(t *testing.T) {
	got, err := KubeVirt()
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"config/crd/kubevirt/kubevirt.io_virtualmachineinstancemigrations.yaml",
		"config/crd/kubevirt/kubevirt.io_virtualmachineinstances.yaml", "config/crd/kubevirt/kubevirt.io_virtualmachines.yaml"}
	var names []string
	for _, m := range got {
		names = append(names, m.Name)
		if !strings.Contains(string(m.Data), "kind: CustomResourceDefinition") || !strings.Contains(string(m.Data), "group: kubevirt.io") {
			t.Errorf("%s: not a kubevirt.io CRD", m.Name)
		}
	}
	if !slices.Equal(names, want) {
		t.Errorf("embedded %v, want %v", names, want)
	}
}
