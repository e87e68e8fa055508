// Package crd carries the CustomResourceDefinitions nqos serves and
// reads (NetworkQoS, NetworkAttachmentDefinition,
// ClusterUserDefinedNetwork) inside the binaries, so a testbed boots from
// any working directory, and the minimal KubeVirt CRDs the testbed's API
// server serves (kubevirt/: VirtualMachine, VirtualMachineInstance,
// VirtualMachineInstanceMigration) so users can apply KubeVirt objects.
package crd

import (
	"embed"
	"fmt"
	"io/fs"
	"slices"
)

//go:embed *.yaml
var manifests embed.FS

//go:embed kubevirt/*.yaml
var kubevirtManifests embed.FS

// Manifest is one CRD manifest file: its name and contents.
type Manifest struct {
	Name string
	Data []byte
}

// Manifests are the embedded CRD manifests, sorted by name.
func Manifests() ([]Manifest, error) { return read(manifests, "*.yaml") }

// KubeVirt are the embedded KubeVirt CRD manifests, sorted by name.
func KubeVirt() ([]Manifest, error) { return read(kubevirtManifests, "kubevirt/*.yaml") }

func read(fsys embed.FS, pattern string) ([]Manifest, error) {
	names, err := fs.Glob(fsys, pattern)
	if err != nil {
		return nil, fmt.Errorf("embedded CRDs: %w", err)
	}
	slices.Sort(names)
	out := make([]Manifest, 0, len(names))
	for _, n := range names {
		data, err := fsys.ReadFile(n)
		if err != nil {
			return nil, fmt.Errorf("embedded CRD %s: %w", n, err)
		}
		out = append(out, Manifest{Name: "config/crd/" + n, Data: data})
	}
	return out, nil
}
