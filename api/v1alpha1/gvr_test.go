package v1alpha1_test

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/yaml"

	nadv1 "github.com/nqos/nqos/api/nad/v1"
	udnv1 "github.com/nqos/nqos/api/udn/v1"
	"github.com/nqos/nqos/api/v1alpha1"
)

// TestGroupVersionResourcesMatchCRDs: the resource and apiVersion each
// API package hands to dynamic clients are the ones its CRD manifest
// serves, with the manifest's kind.
func TestGroupVersionResourcesMatchCRDs(t *testing.T) {
	for _, tc := range []struct {
		file       string
		gvr        schema.GroupVersionResource
		apiVersion string
		kind       string
	}{
		{"k8s.ovn.org_networkqoses.yaml", v1alpha1.GroupVersionResource(), v1alpha1.APIVersion(), v1alpha1.Kind},
		{"k8s.cni.cncf.io_network-attachment-definitions.yaml", nadv1.GroupVersionResource(), nadv1.APIVersion(), nadv1.Kind},
		{"k8s.ovn.org_clusteruserdefinednetworks.yaml", udnv1.GroupVersionResource(), udnv1.APIVersion(), udnv1.Kind},
	} {
		raw, err := os.ReadFile(filepath.Join("../../config/crd", tc.file))
		if err != nil {
			t.Fatal(err)
		}
		crd := &apiextensionsv1.CustomResourceDefinition{}
		if err := yaml.UnmarshalStrict(raw, crd); err != nil {
			t.Fatalf("%s: %v", tc.file, err)
		}
		served := slices.ContainsFunc(crd.Spec.Versions, func(v apiextensionsv1.CustomResourceDefinitionVersion) bool {
			return v.Name == tc.gvr.Version && v.Served
		})
		if tc.gvr.Group != crd.Spec.Group || tc.gvr.Resource != crd.Spec.Names.Plural || !served {
			t.Errorf("%s: Go resource %v, CRD group %q plural %q (version %s served: %v)", tc.file, tc.gvr, crd.Spec.Group, crd.Spec.Names.Plural, tc.gvr.Version, served)
		}
		if want := crd.Spec.Group + "/" + tc.gvr.Version; tc.apiVersion != want || tc.kind != crd.Spec.Names.Kind {
			t.Errorf("%s: Go apiVersion %q kind %q, CRD %q kind %q", tc.file, tc.apiVersion, tc.kind, want, crd.Spec.Names.Kind)
		}
	}
}
