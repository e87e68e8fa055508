package deploytest

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/nqos/nqos/internal/testenv"
)

// The image builds from build/Containerfile (a local builder image made
// from a debootstrap root and this machine's Go; runtime FROM scratch;
// modules from the local module cache) and `nqos-controller --help` runs
// in it as the non-root user. The checked image is saved for
// hack/kind/deploy.sh (saveImage).
func TestContainerImage(t *testing.T) {
	testenv.Root(t, "runs a Docker engine of its own")
	testenv.Binaries(t, "dockerd", "docker", "containerd", "go")
	root, err := builderRoot()
	testenv.Check(t, "Go builder root file system", err)
	e := startDocker(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Minute)
	defer cancel()
	const builder, image = "nqos/go-builder:bookworm-local", "nqos/nqos-controller:test"
	if _, err := e.docker(ctx, "import", root, builder); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	_, err = e.docker(ctx, "build", "--network=host", "-f", filepath.Join(repoRoot, "build", "Containerfile"),
		"--build-arg", "BUILDER="+builder, "--build-arg", "RUNTIME=scratch",
		"--build-arg", "GOPROXY="+moduleProxy(t), "--build-arg", "GOSUMDB=off", "-t", image, repoRoot)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("image build: %v", time.Since(start).Round(time.Second))
	out, err := e.docker(ctx, "image", "inspect", "--format", "{{.Size}} {{.Config.User}} {{json .Config.Entrypoint}}", image)
	if err != nil {
		t.Fatal(err)
	}
	f := strings.Fields(out)
	if len(f) != 3 {
		t.Fatalf("image inspect: %q", out)
	}
	size, err := strconv.ParseInt(f[0], 10, 64)
	if err != nil {
		t.Fatalf("image size %q: %v", f[0], err)
	}
	t.Logf("image size: %.1f MB", float64(size)/1e6)
	if f[1] != "65532:65532" || f[2] != `["/usr/local/bin/nqos-controller"]` {
		t.Errorf("image user %s entrypoint %s, want 65532:65532 and /usr/local/bin/nqos-controller", f[1], f[2])
	}
	stdout, stderr, err := e.dockerOutputs(ctx, "run", "--rm", "--network=none", image, "--help")
	if err != nil {
		t.Fatal(err)
	}
	help := stdout + stderr // the flag package prints the usage to stderr
	for _, flag := range []string{"-nb-address", "-nb-client-cacert", "-leader-elect", "-health-probe-bind-address"} {
		if !strings.Contains(help, flag) {
			t.Errorf("--help in the image lacks %s:\n%s", flag, help)
		}
	}
	if !t.Failed() {
		saveImage(ctx, t, e, image)
	}
}

// saveImage writes the checked image where hack/controller-image-cache.sh
// names it for this tree, so `make kind-deploy` loads it instead of
// building the same sources again. Older saves are removed.
func saveImage(ctx context.Context, t *testing.T, e *dockerEngine, image string) {
	t.Helper()
	out, err := exec.CommandContext(ctx, filepath.Join(repoRoot, "hack", "controller-image-cache.sh"), "path").Output()
	if err != nil {
		t.Fatalf("hack/controller-image-cache.sh path: %v", err)
	}
	path := strings.TrimSpace(string(out))
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	old, err := filepath.Glob(filepath.Join(dir, "nqos-controller-*.tar"))
	if err != nil {
		t.Fatal(err)
	}
	tmp := path + ".tmp"
	if _, err := e.docker(ctx, "save", "-o", tmp, image); err != nil {
		removePartial(t, tmp)
		t.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		removePartial(t, tmp)
		t.Fatal(err)
	}
	for _, o := range old {
		if o != path {
			if err := os.Remove(o); err != nil {
				t.Error(err)
			}
		}
	}
	t.Logf("image saved for kind-deploy: %s", path)
}

// removePartial deletes a save that did not complete, so the cache never
// holds a file kind-deploy could mistake for an image.
func removePartial(t *testing.T, tmp string) {
	t.Helper()
	if err := os.Remove(tmp); err != nil && !os.IsNotExist(err) {
		t.Errorf("removing the partial save %s: %v", tmp, err)
	}
}
