package crd

import (
	"os"
	"path/filepath"
	"slices"
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
