package deploy

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
)

// Deploy applies these objects of the shipped manifests, in this order.
func TestShippedManifests(t *testing.T) {
	crds, err := readDir(filepath.Join(repoRoot, crdDir))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, u := range crds {
		got = append(got, ref(u))
	}
	for _, f := range []string{namespaceFile, rbacFile} {
		objs, err := readObjects(filepath.Join(repoRoot, f))
		if err != nil {
			t.Fatal(err)
		}
		for _, u := range objs {
			got = append(got, ref(u))
		}
	}
	want := []string{
		"CustomResourceDefinition network-attachment-definitions.k8s.cni.cncf.io",
		"CustomResourceDefinition clusteruserdefinednetworks.k8s.ovn.org",
		"CustomResourceDefinition networkqoses.k8s.ovn.org",
		"Namespace nqos-system", "Namespace nqos-zones",
		"ServiceAccount nqos-system/nqos-controller",
		"ClusterRole nqos-controller", "ClusterRoleBinding nqos-controller",
		"Role nqos-system/nqos-controller-leader-election", "RoleBinding nqos-system/nqos-controller-leader-election",
		"Role nqos-zones/nqos-controller-zone-heartbeat", "RoleBinding nqos-zones/nqos-controller-zone-heartbeat",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("objects:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func TestReadObjects(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		name, body string
		want       int
		wantErr    string
	}{
		{"empty documents skipped", "---\n# only a comment\n---\nkind: Namespace\napiVersion: v1\nmetadata: {name: a}\n---\n", 1, ""},
		{"no kind", "apiVersion: v1\nmetadata: {name: a}\n", 0, "document 1: no kind or name"},
		{"not YAML", "kind: [\n", 0, "document 1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := filepath.Join(dir, strings.ReplaceAll(tc.name, " ", "-")+".yaml")
			if err := os.WriteFile(f, []byte(tc.body), 0o644); err != nil {
				t.Fatal(err)
			}
			objs, err := readObjects(f)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) || !strings.Contains(err.Error(), f) {
					t.Fatalf("err %v, want one naming %s and %q", err, f, tc.wantErr)
				}
				return
			}
			if err != nil || len(objs) != tc.want {
				t.Fatalf("%d objects, err %v; want %d", len(objs), err, tc.want)
			}
		})
	}
	if _, err := readDir(dir + "/none"); err == nil {
		t.Error("readDir of a missing directory: no error")
	}
}

func TestReadDeploymentRejectsUnknownFields(t *testing.T) {
	f := filepath.Join(t.TempDir(), "d.yaml")
	body := "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: a, namespace: b}\nspec: {replicaz: 2}\n"
	if err := os.WriteFile(f, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := readDeployment(f); err == nil || !strings.Contains(err.Error(), "replicaz") {
		t.Errorf("err %v, want one naming the unknown field", err)
	}
}

func TestRolledOut(t *testing.T) {
	two := int32(2)
	for _, tc := range []struct {
		name string
		gen  int64
		s    appsv1.DeploymentStatus
		want bool
	}{
		{"done", 3, appsv1.DeploymentStatus{ObservedGeneration: 3, Replicas: 2, UpdatedReplicas: 2, AvailableReplicas: 2}, true},
		{"generation not observed", 4, appsv1.DeploymentStatus{ObservedGeneration: 3, Replicas: 2, UpdatedReplicas: 2, AvailableReplicas: 2}, false},
		{"old pod still there (surge)", 3, appsv1.DeploymentStatus{ObservedGeneration: 3, Replicas: 3, UpdatedReplicas: 2, AvailableReplicas: 3}, false},
		{"new pod not available (old ones are)", 3, appsv1.DeploymentStatus{ObservedGeneration: 3, Replicas: 3, UpdatedReplicas: 1, AvailableReplicas: 2}, false},
		{"updated but not ready", 3, appsv1.DeploymentStatus{ObservedGeneration: 3, Replicas: 2, UpdatedReplicas: 2, AvailableReplicas: 1}, false},
	} {
		d := &appsv1.Deployment{}
		d.Generation, d.Spec.Replicas, d.Status = tc.gen, &two, tc.s
		if got, state := rolledOut(d); got != tc.want {
			t.Errorf("%s: %v (%s), want %v", tc.name, got, state, tc.want)
		}
	}
}

func TestSecretHash(t *testing.T) {
	a := &corev1.Secret{Data: map[string][]byte{"ca.crt": []byte("c"), "tls.crt": []byte("t"), "tls.key": []byte("k")}}
	b := &corev1.Secret{Data: map[string][]byte{"ca.crt": []byte("c"), "tls.crt": []byte("t"), "tls.key": []byte("k2")}}
	// the same bytes split differently between keys must not collide
	c := &corev1.Secret{Data: map[string][]byte{"ca.crt": []byte("ct"), "tls.crt": nil, "tls.key": []byte("k")}}
	if secretHash(a) != secretHash(a) || secretHash(a) == secretHash(b) || secretHash(a) == secretHash(c) {
		t.Errorf("hashes a %s b %s c %s: want a stable, and a, b, c distinct", secretHash(a), secretHash(b), secretHash(c))
	}
}

func TestSpecValidate(t *testing.T) {
	ok := Spec{Name: "nqos-x", Kubeconfig: "k", Image: DefaultImage, Build: BuildNever, Timeout: 1}
	if err := ok.validate(); err != nil {
		t.Fatal(err)
	}
	for name, mut := range map[string]func(*Spec){
		"name":       func(s *Spec) { s.Name = "kind" },
		"bare":       func(s *Spec) { s.Name = "nqos-" },
		"kubeconfig": func(s *Spec) { s.Kubeconfig = "" },
		"image":      func(s *Spec) { s.Image = "" },
		"replicas":   func(s *Spec) { s.Replicas = -1 },
		"timeout":    func(s *Spec) { s.Timeout = 0 },
		"build":      func(s *Spec) { s.Build = "sometimes" },
	} {
		s := ok
		mut(&s)
		if s.validate() == nil {
			t.Errorf("%s: no error", name)
		}
	}
}
