package deploytest

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/yaml"

	"github.com/nqos/nqos/internal/kubeapi"
)

// manifest is one document of a config/deploy file.
type manifest struct {
	file string
	doc  int
	kind string
	meta metav1.ObjectMeta
	obj  any    // the typed object it decodes into
	raw  []byte // the document as JSON
}

func (m manifest) String() string {
	return fmt.Sprintf("%s document %d (%s %s)", filepath.Base(m.file), m.doc, m.kind, m.meta.Name)
}

// kinds are the kinds config/deploy may hold: their typed objects and
// resources.
var kinds = map[string]struct {
	gvr schema.GroupVersionResource
	new func() any
}{
	"Namespace":          {schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}, func() any { return &corev1.Namespace{} }},
	"ServiceAccount":     {schema.GroupVersionResource{Version: "v1", Resource: "serviceaccounts"}, func() any { return &corev1.ServiceAccount{} }},
	"ClusterRole":        {rbacv1.SchemeGroupVersion.WithResource("clusterroles"), func() any { return &rbacv1.ClusterRole{} }},
	"ClusterRoleBinding": {rbacv1.SchemeGroupVersion.WithResource("clusterrolebindings"), func() any { return &rbacv1.ClusterRoleBinding{} }},
	"Role":               {rbacv1.SchemeGroupVersion.WithResource("roles"), func() any { return &rbacv1.Role{} }},
	"RoleBinding":        {rbacv1.SchemeGroupVersion.WithResource("rolebindings"), func() any { return &rbacv1.RoleBinding{} }},
	"DaemonSet":          {appsv1.SchemeGroupVersion.WithResource("daemonsets"), func() any { return &appsv1.DaemonSet{} }},
	"Deployment":         {appsv1.SchemeGroupVersion.WithResource("deployments"), func() any { return &appsv1.Deployment{} }},
	"NetworkPolicy":      {networkingv1.SchemeGroupVersion.WithResource("networkpolicies"), func() any { return &networkingv1.NetworkPolicy{} }},
}

// readManifests decodes every document of config/deploy/*.yaml strictly
// (unknown or duplicate fields are errors) into its typed object.
func readManifests() ([]manifest, error) {
	files, err := filepath.Glob(filepath.Join(repoRoot, "config", "deploy", "*.yaml"))
	if err != nil || len(files) == 0 {
		return nil, fmt.Errorf("config/deploy: no manifests (%v)", err)
	}
	sort.Strings(files)
	var out []manifest
	for _, f := range files {
		ms, err := decodeFile(f)
		if err != nil {
			return nil, err
		}
		out = append(out, ms...)
	}
	return out, nil
}

func decodeFile(f string) ([]manifest, error) {
	raw, err := os.ReadFile(f)
	if err != nil {
		return nil, fmt.Errorf("manifest: %w", err)
	}
	var out []manifest
	err = kubeapi.EachDocument(f, raw, func(doc int, chunk []byte) error {
		m, err := decodeDoc(f, doc, chunk)
		if err != nil {
			return err
		}
		out = append(out, m)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

func decodeDoc(f string, doc int, chunk []byte) (manifest, error) {
	var head struct {
		APIVersion string            `json:"apiVersion"`
		Kind       string            `json:"kind"`
		Metadata   metav1.ObjectMeta `json:"metadata"`
	}
	if err := yaml.Unmarshal(chunk, &head); err != nil {
		return manifest{}, fmt.Errorf("%s document %d: %w", f, doc, err)
	}
	k, ok := kinds[head.Kind]
	if !ok {
		return manifest{}, fmt.Errorf("%s document %d: kind %q is not one config/deploy may hold", f, doc, head.Kind)
	}
	if want := k.gvr.GroupVersion().String(); head.APIVersion != want {
		return manifest{}, fmt.Errorf("%s document %d: %s apiVersion %q, want %q", f, doc, head.Kind, head.APIVersion, want)
	}
	obj := k.new()
	if err := yaml.UnmarshalStrict(chunk, obj); err != nil {
		return manifest{}, fmt.Errorf("%s document %d (%s %s): %w", f, doc, head.Kind, head.Metadata.Name, err)
	}
	js, err := yaml.YAMLToJSON(chunk)
	if err != nil {
		return manifest{}, fmt.Errorf("%s document %d: %w", f, doc, err)
	}
	return manifest{file: f, doc: doc, kind: head.Kind, meta: head.Metadata, obj: obj, raw: js}, nil
}

// apply server-side-applies m as fieldManager (dry run when dryRun).
func apply(ctx context.Context, cfg *rest.Config, m manifest, dryRun bool) error {
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return err
	}
	var ri dynamic.ResourceInterface = dyn.Resource(kinds[m.kind].gvr)
	if m.meta.Namespace != "" {
		ri = dyn.Resource(kinds[m.kind].gvr).Namespace(m.meta.Namespace)
	}
	opts := metav1.PatchOptions{FieldManager: "nqos-deploytest"}
	if dryRun {
		opts.DryRun = []string{metav1.DryRunAll}
	}
	if _, err := ri.Patch(ctx, m.meta.Name, types.ApplyPatchType, m.raw, opts); err != nil {
		return fmt.Errorf("apply %s: %w", m, err)
	}
	return nil
}

func TestManifestsDecodeStrictly(t *testing.T) {
	ms, err := readManifests()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]int{}
	for _, m := range ms {
		got[m.kind]++
	}
	// The controller's and the aggregator's.
	want := map[string]int{"Namespace": 2, "ServiceAccount": 2, "ClusterRole": 2, "ClusterRoleBinding": 2,
		"Role": 4, "RoleBinding": 4, "DaemonSet": 1, "Deployment": 2, "NetworkPolicy": 1}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("config/deploy kinds = %v, want %v", got, want)
	}
	// A misspelt field is refused, naming the file and the object.
	bad := []byte("apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: x}\nspec: {replicas: 2, replica: 3}\n")
	if _, err := decodeDoc("bad.yaml", 1, bad); err == nil || !bytes.Contains([]byte(err.Error()), []byte(`unknown field "replica"`)) {
		t.Errorf("strict decode of a misspelt field: err = %v, want unknown field \"replica\"", err)
	}
	for _, m := range ms {
		if d, ok := m.obj.(*appsv1.Deployment); ok && (d.Spec.Replicas == nil || *d.Spec.Replicas != 2) {
			t.Errorf("%s: replicas %v, want 2", m, d.Spec.Replicas)
		}
	}
}

// Every manifest passes a server-side dry-run apply on a real API server
// (the Namespace is applied for real first: namespaced dry runs need it).
func TestManifestsDryRunApply(t *testing.T) {
	srv := the.cluster.get(t)
	ms, err := readManifests()
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for _, m := range ms {
		if m.kind == "Namespace" {
			if err := apply(ctx, srv.RESTConfig(), m, false); err != nil {
				t.Fatal(err)
			}
		}
	}
	for _, m := range ms {
		if err := apply(ctx, srv.RESTConfig(), m, true); err != nil {
			t.Errorf("server-side dry run: %v", err)
		}
	}
	// The dry run really validates: a bad container port is refused.
	for _, m := range ms {
		if m.kind != "Deployment" {
			continue
		}
		bad := m
		bad.raw = bytes.Replace(m.raw, []byte(`"containerPort":8081`), []byte(`"containerPort":700000`), 1)
		if bytes.Equal(bad.raw, m.raw) {
			t.Fatalf("%s: no containerPort 8081 to break", m)
		}
		if err := apply(ctx, srv.RESTConfig(), bad, true); err == nil {
			t.Errorf("%s with containerPort 700000: dry run accepted it", m)
		}
	}
}
