package v1alpha1

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"

	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"
)

const crdDir = "../../config/crd"

// loadCRD strictly decodes a CRD manifest: a misspelt schema keyword is an
// error, not a silently dropped field.
func loadCRD(t *testing.T, file string) *apiextensionsv1.CustomResourceDefinition {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(crdDir, file))
	if err != nil {
		t.Fatal(err)
	}
	crd := &apiextensionsv1.CustomResourceDefinition{}
	if err := yaml.UnmarshalStrict(raw, crd); err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	return crd
}

// TestCRDsValid runs the API server's own CRD validation (structural
// schema, list types, CEL compilation and cost) on every manifest.
func TestCRDsValid(t *testing.T) {
	for _, file := range []string{
		"k8s.ovn.org_networkqoses.yaml",
		"k8s.cni.cncf.io_network-attachment-definitions.yaml",
		"k8s.ovn.org_clusteruserdefinednetworks.yaml",
	} {
		t.Run(file, func(t *testing.T) {
			v1crd := loadCRD(t, file)
			// What the API server does before validating a create.
			apiextensionsv1.SetObjectDefaults_CustomResourceDefinition(v1crd)
			for _, v := range v1crd.Spec.Versions {
				if v.Storage {
					v1crd.Status.StoredVersions = append(v1crd.Status.StoredVersions, v.Name)
				}
			}
			internal := &apiextensions.CustomResourceDefinition{}
			if err := apiextensionsv1.Convert_v1_CustomResourceDefinition_To_apiextensions_CustomResourceDefinition(v1crd, internal, nil); err != nil {
				t.Fatal(err)
			}
			if errs := validation.ValidateCustomResourceDefinition(context.Background(), internal); len(errs) > 0 {
				t.Fatalf("%s invalid: %v", file, errs.ToAggregate())
			}
		})
	}
}

// TestNetworkQoSCRDMatchesGoTypes walks the Go types' JSON tags and the
// CRD schema together: same properties, same required lists, compatible
// types, everywhere.
func TestNetworkQoSCRDMatchesGoTypes(t *testing.T) {
	crd := loadCRD(t, "k8s.ovn.org_networkqoses.yaml")
	if crd.Spec.Group != GroupName || crd.Spec.Names.Kind != Kind || crd.Spec.Names.Plural != Resource || len(crd.Spec.Versions) != 1 {
		t.Fatalf("names: %+v", crd.Spec.Names)
	}
	v := crd.Spec.Versions[0]
	if v.Name != Version || v.Subresources == nil || v.Subresources.Status == nil {
		t.Errorf("version %s needs the status subresource", v.Name)
	}
	if len(v.AdditionalPrinterColumns) != 1 || v.AdditionalPrinterColumns[0].Name != "Status" || v.AdditionalPrinterColumns[0].JSONPath != ".status.status" {
		t.Errorf("print columns %+v", v.AdditionalPrinterColumns)
	}
	compareSchema(t, "NetworkQoS", reflect.TypeOf(NetworkQoS{}), *v.Schema.OpenAPIV3Schema)
}

var timeType = reflect.TypeOf(metav1.Time{})

func compareSchema(t *testing.T, path string, typ reflect.Type, s apiextensionsv1.JSONSchemaProps) {
	t.Helper()
	for typ.Kind() == reflect.Pointer {
		typ = typ.Elem()
	}
	want := schemaType(typ)
	if s.Type != want {
		t.Errorf("%s: schema type %q, Go type %s wants %q", path, s.Type, typ, want)
		return
	}
	switch {
	case typ == timeType:
	case typ.Kind() == reflect.Struct:
		compareStruct(t, path, typ, s)
	case typ.Kind() == reflect.Slice:
		if s.Items == nil || s.Items.Schema == nil {
			t.Errorf("%s: array without items schema", path)
			return
		}
		compareSchema(t, path+"[]", typ.Elem(), *s.Items.Schema)
	case typ.Kind() == reflect.Map:
		if s.AdditionalProperties == nil || s.AdditionalProperties.Schema == nil {
			t.Errorf("%s: map without additionalProperties", path)
			return
		}
		compareSchema(t, path+"{}", typ.Elem(), *s.AdditionalProperties.Schema)
	}
}

func compareStruct(t *testing.T, path string, typ reflect.Type, s apiextensionsv1.JSONSchemaProps) {
	t.Helper()
	fields, required := jsonFields(typ)
	var goNames, schemaNames []string
	for name := range fields {
		goNames = append(goNames, name)
	}
	for name := range s.Properties {
		schemaNames = append(schemaNames, name)
	}
	sort.Strings(goNames)
	sort.Strings(schemaNames)
	if strings.Join(goNames, ",") != strings.Join(schemaNames, ",") {
		t.Errorf("%s: Go fields %v, schema properties %v", path, goNames, schemaNames)
	}
	req := append([]string(nil), s.Required...)
	sort.Strings(req)
	if strings.Join(required, ",") != strings.Join(req, ",") {
		t.Errorf("%s: Go required %v, schema required %v", path, required, req)
	}
	for name, ft := range fields {
		ps, ok := s.Properties[name]
		if !ok {
			continue
		}
		if ft.Type == reflect.TypeOf(metav1.ObjectMeta{}) {
			continue // the API server owns metadata's schema
		}
		compareSchema(t, path+"."+name, ft.Type, ps)
	}
}

// jsonFields returns a struct's JSON fields (inline members flattened)
// and the sorted names of those without omitempty.
func jsonFields(typ reflect.Type) (map[string]reflect.StructField, []string) {
	fields := map[string]reflect.StructField{}
	var required []string
	for i := 0; i < typ.NumField(); i++ {
		f := typ.Field(i)
		name, opts, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "-" || !f.IsExported() {
			continue
		}
		if name == "" && (opts == "inline" || f.Anonymous) {
			inner, req := jsonFields(f.Type)
			for k, v := range inner {
				fields[k] = v
			}
			required = append(required, req...)
			continue
		}
		fields[name] = f
		if !strings.Contains(opts, "omitempty") {
			required = append(required, name)
		}
	}
	sort.Strings(required)
	return fields, required
}

func schemaType(typ reflect.Type) string {
	if typ == timeType {
		return "string"
	}
	switch typ.Kind() {
	case reflect.String:
		return "string"
	case reflect.Bool:
		return "boolean"
	case reflect.Int, reflect.Int32, reflect.Int64, reflect.Uint32, reflect.Uint64:
		return "integer"
	case reflect.Slice:
		return "array"
	}
	return "object"
}

// TestBandwidthOmitsZero: unlike upstream, an empty Bandwidth never
// serialises rate: 0 or burst: 0 (which the schema's minimum rejects).
func TestBandwidthOmitsZero(t *testing.T) {
	cases := []struct {
		in   Bandwidth
		want string
	}{
		{Bandwidth{}, `{}`},
		{Bandwidth{Burst: 5}, `{"burst":5}`},
		{Bandwidth{Rate: 100000, Burst: 5000}, `{"rate":100000,"burst":5000}`},
	}
	for _, c := range cases {
		got, err := json.Marshal(c.in)
		if err != nil || string(got) != c.want {
			t.Errorf("%+v: %s (%v), want %s", c.in, got, err, c.want)
		}
	}
	raw, _ := json.Marshal(Rule{DSCP: 1})
	if strings.Contains(string(raw), "rate") || strings.Contains(string(raw), "bandwidth") {
		t.Errorf("rule without bandwidth serialises %s", raw)
	}
}
