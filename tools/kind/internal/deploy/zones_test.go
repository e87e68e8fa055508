package deploy

import (
	"path/filepath"
	"slices"
	"testing"
)

// TestPatchShippedDaemonSet: the per-node manifest gets the API server
// address, the image, the annotation and the ovnkube flag, and keeps its
// unix-socket NB and --node; patching twice is patching once.
func TestPatchShippedDaemonSet(t *testing.T) {
	ds, err := readDaemonSet(filepath.Join(repoRoot, daemonSetFile))
	if err != nil {
		t.Fatal(err)
	}
	p := kindPatch{APIServerHost: "172.31.254.2", APIServerPort: "6443", Image: "nqos/x:1", ImageID: "sha256:1"}
	for range 2 {
		if err := patchNodeTemplate(&ds.Spec.Template, p); err != nil {
			t.Fatal(err)
		}
	}
	c := templateContainer(&ds.Spec.Template, containerName)
	if c.Image != "nqos/x:1" || ds.Spec.Template.Annotations[annotationImageID] != "sha256:1" {
		t.Errorf("image %s, annotations %v", c.Image, ds.Spec.Template.Annotations)
	}
	for _, want := range []string{"--nb-address=unix:/var/run/ovn/ovnnb_db.sock", "--node=$(NODE_NAME)", ovnkubeNetworkQoSFlag + "=false"} {
		if n := slices.Index(c.Args, want); n < 0 || slices.Index(c.Args[n+1:], want) >= 0 {
			t.Errorf("args %v: want %s once", c.Args, want)
		}
	}
	env := map[string]string{}
	for _, e := range c.Env {
		env[e.Name] = e.Value
	}
	if env["KUBERNETES_SERVICE_HOST"] != "172.31.254.2" || env["KUBERNETES_SERVICE_PORT"] != "6443" || len(c.Env) != 5 {
		t.Errorf("env %v", c.Env)
	}
	if err := patchTemplate(&ds.Spec.Template, "nope", p); err == nil {
		t.Error("a missing container: no error")
	}
}
