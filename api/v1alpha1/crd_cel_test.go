package v1alpha1

import (
	"context"
	"strings"
	"testing"

	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/cel"
	"k8s.io/apimachinery/pkg/util/validation/field"
	celconfig "k8s.io/apiserver/pkg/apis/cel"
	"sigs.k8s.io/yaml"
)

// celValidator builds the API server's CEL validator for the NetworkQoS
// schema.
func celValidator(t *testing.T) (*cel.Validator, *schema.Structural) {
	t.Helper()
	crd := loadCRD(t, "k8s.ovn.org_networkqoses.yaml")
	var internal apiextensions.JSONSchemaProps
	if err := apiextensionsv1.Convert_v1_JSONSchemaProps_To_apiextensions_JSONSchemaProps(crd.Spec.Versions[0].Schema.OpenAPIV3Schema, &internal, nil); err != nil {
		t.Fatal(err)
	}
	s, err := schema.NewStructural(&internal)
	if err != nil {
		t.Fatal(err)
	}
	return cel.NewValidator(s, true, celconfig.PerCallLimit), s
}

func specObject(t *testing.T, spec string) map[string]any {
	t.Helper()
	var obj map[string]any
	if err := yaml.Unmarshal([]byte("apiVersion: k8s.ovn.org/v1alpha1\nkind: NetworkQoS\nmetadata: {name: q}\nspec:\n"+spec), &obj); err != nil {
		t.Fatal(err)
	}
	return obj
}

// TestCRDCELRules evaluates the CRD's CEL rules the way the API server
// does on create and update.
func TestCRDCELRules(t *testing.T) {
	v, s := celValidator(t)
	nad := `  networkSelectors:
  - networkSelectionType: NetworkAttachmentDefinitions
    networkAttachmentDefinitionSelector: { namespaceSelector: {}, networkSelector: { matchLabels: { a: b } } }
`
	cases := []struct {
		name, spec, old, want string
	}{
		{"valid", nad + "  priority: 1\n  egress: [ { dscp: 1, classifier: { to: [ { ipBlock: { cidr: 10.0.0.0/8 } } ] } } ]\n", "", ""},
		{"selector and ipBlock", nad + "  priority: 1\n  egress: [ { dscp: 1, classifier: { to: [ { podSelector: {}, ipBlock: { cidr: 10.0.0.0/8 } } ] } } ]\n", "",
			"Can't specify both podSelector/namespaceSelector and ipBlock"},
		{"default network type", "  networkSelectors: [ { networkSelectionType: DefaultNetwork } ]\n  priority: 1\n  egress: []\n", "", "Unsupported network selection type"},
		{"inconsistent union", "  networkSelectors: [ { networkSelectionType: ClusterUserDefinedNetworks, networkAttachmentDefinitionSelector: { namespaceSelector: {}, networkSelector: {} } } ]\n  priority: 1\n  egress: []\n", "",
			"Inconsistent selector: both networkSelectionType ClusterUserDefinedNetworks and clusterUserDefinedNetworkSelector"},
		{"immutable selectors", nad + "  priority: 1\n  egress: []\n",
			strings.Replace(nad, "a: b", "a: c", 1) + "  priority: 1\n  egress: []\n", "networkSelector is immutable"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			obj := specObject(t, c.spec)
			var old any
			if c.old != "" {
				old = specObject(t, c.old)
			}
			errs, _ := v.Validate(context.Background(), field.NewPath("root"), s, obj, old, celconfig.RuntimeCELCostBudget)
			got := errs.ToAggregate()
			switch {
			case c.want == "" && got != nil:
				t.Errorf("unexpected errors: %v", got)
			case c.want != "" && (got == nil || !strings.Contains(got.Error(), c.want)):
				t.Errorf("errors %v, want %q", got, c.want)
			}
		})
	}
}
