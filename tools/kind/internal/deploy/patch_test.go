package deploy

import (
	"flag"
	"os"
	"path/filepath"
	"slices"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// repoRoot is the nqos checkout this module sits in.
const repoRoot = "../../../.."

var testPatch = kindPatch{
	APIServerHost: "172.18.0.3", APIServerPort: "6443", NBAddress: "ssl:172.18.0.3:9641",
	Image: "nqos/nqos-controller:dev", ImageID: "sha256:0123", TLSHash: "abcd", Replicas: 0,
}

// The shipped central Deployment, patched for KinD, is the golden file:
// a change of the manifest or of the patch shows up as its diff
// (go test -update rewrites it).
func TestPatchShippedDeploymentGolden(t *testing.T) {
	d, err := readDeployment(filepath.Join(repoRoot, deploymentFile))
	if err != nil {
		t.Fatal(err)
	}
	if err := patchDeployment(d, testPatch); err != nil {
		t.Fatal(err)
	}
	u, err := toUnstructured(d, "apps/v1", "Deployment")
	if err != nil {
		t.Fatal(err)
	}
	got, err := yaml.Marshal(u.Object)
	if err != nil {
		t.Fatal(err)
	}
	golden := filepath.Join("testdata", "deployment-central.kind.yaml")
	if *update {
		if err := os.WriteFile(golden, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (go test -update writes it)", err)
	}
	if string(got) != string(want) {
		t.Errorf("patched %s differs from %s (go test -update rewrites it):\n%s", deploymentFile, golden, got)
	}
}

func deploymentWith(c corev1.Container, replicas int32) *appsv1.Deployment {
	d := &appsv1.Deployment{}
	d.Name, d.Namespace = "nqos-controller", "nqos-system"
	d.Spec.Replicas = &replicas
	d.Spec.Template.Spec.Containers = []corev1.Container{{Name: "sidecar"}, c}
	return d
}

func TestPatchDeployment(t *testing.T) {
	base := corev1.Container{Name: containerName, Image: "old", Args: []string{"--nb-address=ssl:svc:6641", "--leader-elect"}}
	for _, tc := range []struct {
		name     string
		c        corev1.Container
		p        kindPatch
		wantErr  bool
		args     []string
		env      []corev1.EnvVar
		image    string
		replicas int32
	}{
		{name: "manifest replicas kept", c: base, p: testPatch,
			args:  []string{"--nb-address=ssl:172.18.0.3:9641", "--leader-elect", "--ovnkube-enable-network-qos=false"},
			env:   []corev1.EnvVar{{Name: "KUBERNETES_SERVICE_HOST", Value: "172.18.0.3"}, {Name: "KUBERNETES_SERVICE_PORT", Value: "6443"}},
			image: "nqos/nqos-controller:dev", replicas: 2},
		{name: "replicas and image given", c: base, p: kindPatch{NBAddress: "ssl:10.0.0.1:1", APIServerHost: "h", APIServerPort: "p", Image: "x:y", Replicas: 1},
			args:  []string{"--nb-address=ssl:10.0.0.1:1", "--leader-elect", "--ovnkube-enable-network-qos=false"},
			env:   []corev1.EnvVar{{Name: "KUBERNETES_SERVICE_HOST", Value: "h"}, {Name: "KUBERNETES_SERVICE_PORT", Value: "p"}},
			image: "x:y", replicas: 1},
		{name: "no image keeps the manifest's", c: base, p: kindPatch{NBAddress: "a", APIServerHost: "h", APIServerPort: "p"},
			args:  []string{"--nb-address=a", "--leader-elect", "--ovnkube-enable-network-qos=false"},
			env:   []corev1.EnvVar{{Name: "KUBERNETES_SERVICE_HOST", Value: "h"}, {Name: "KUBERNETES_SERVICE_PORT", Value: "p"}},
			image: "old", replicas: 2},
		{name: "env defined by the manifest is replaced, not repeated",
			c: corev1.Container{Name: containerName, Args: []string{"--nb-address=x"}, Env: []corev1.EnvVar{
				{Name: "POD_NAME", Value: "n"},
				{Name: "KUBERNETES_SERVICE_HOST", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "status.hostIP"}}},
			}},
			p:    kindPatch{NBAddress: "a", APIServerHost: "h", APIServerPort: "p"},
			args: []string{"--nb-address=a", "--ovnkube-enable-network-qos=false"},
			env: []corev1.EnvVar{{Name: "POD_NAME", Value: "n"}, {Name: "KUBERNETES_SERVICE_HOST", Value: "h"},
				{Name: "KUBERNETES_SERVICE_PORT", Value: "p"}},
			replicas: 2},
		{name: "ovnkube's NetworkQoS on: the flag says true", c: base,
			p:     kindPatch{NBAddress: "a", APIServerHost: "h", APIServerPort: "p", OVNKubeNetworkQoS: true},
			args:  []string{"--nb-address=a", "--leader-elect", "--ovnkube-enable-network-qos=true"},
			env:   []corev1.EnvVar{{Name: "KUBERNETES_SERVICE_HOST", Value: "h"}, {Name: "KUBERNETES_SERVICE_PORT", Value: "p"}},
			image: "old", replicas: 2},
		{name: "a manifest's false is replaced by true",
			c:     corev1.Container{Name: containerName, Image: "old", Args: []string{"--nb-address=x", "--ovnkube-enable-network-qos=false"}},
			p:     kindPatch{NBAddress: "a", APIServerHost: "h", APIServerPort: "p", OVNKubeNetworkQoS: true},
			args:  []string{"--nb-address=a", "--ovnkube-enable-network-qos=true"},
			env:   []corev1.EnvVar{{Name: "KUBERNETES_SERVICE_HOST", Value: "h"}, {Name: "KUBERNETES_SERVICE_PORT", Value: "p"}},
			image: "old", replicas: 2},
		{name: "no --nb-address", c: corev1.Container{Name: containerName, Args: []string{"--nb=unix:/x"}}, p: testPatch, wantErr: true},
		{name: "no controller container", c: corev1.Container{Name: "other", Args: base.Args}, p: testPatch, wantErr: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.c.Args = slices.Clone(tc.c.Args)
			d := deploymentWith(tc.c, 2)
			err := patchDeployment(d, tc.p)
			if (err != nil) != tc.wantErr {
				t.Fatalf("err %v, want error %v", err, tc.wantErr)
			}
			if tc.wantErr {
				return
			}
			for pass := 1; pass <= 2; pass++ { // a second patch changes nothing
				c := container(d, containerName)
				if !slices.Equal(c.Args, tc.args) || c.Image != tc.image || *d.Spec.Replicas != tc.replicas ||
					!slices.EqualFunc(c.Env, tc.env, envEqual) {
					t.Errorf("pass %d: args %q env %v image %q replicas %d; want %q %v %q %d",
						pass, c.Args, c.Env, c.Image, *d.Spec.Replicas, tc.args, tc.env, tc.image, tc.replicas)
				}
				if a := d.Spec.Template.Annotations; a[annotationImageID] != tc.p.ImageID || a[annotationTLSHash] != tc.p.TLSHash {
					t.Errorf("pass %d: annotations %v", pass, a)
				}
				if err := patchDeployment(d, tc.p); err != nil {
					t.Fatal(err)
				}
			}
		})
	}
}

func envEqual(a, b corev1.EnvVar) bool {
	return a.Name == b.Name && a.Value == b.Value && (a.ValueFrom == nil) == (b.ValueFrom == nil)
}

func TestArgValue(t *testing.T) {
	args := []string{"--leader-elect", "--leader-elect-lease-name=a", "--leader-elect-lease-name=b", "--leader-elect-lease-namespace=x"}
	if got := argValue(args, "--leader-elect-lease-name", "d"); got != "b" {
		t.Errorf("last value: %q, want b", got)
	}
	if got := argValue(args, "--nb-address", "d"); got != "d" {
		t.Errorf("absent: %q, want the fallback d", got)
	}
}
