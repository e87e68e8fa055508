package deploytest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/nqos/nqos/internal/poll"
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

// dockerEngine is a dockerd started by the test with its own data root,
// exec root and socket (no bridge, no iptables rules: builds and runs use
// the host network or none), stopped and removed at test end.
type dockerEngine struct {
	t    testing.TB
	host string // DOCKER_HOST
	dir  string
}

func startDocker(t testing.TB) *dockerEngine {
	t.Helper()
	id := newID(t)
	dir := filepath.Join("/var/lib", "nqos-docker-"+id)
	run := filepath.Join("/run", "nqos-docker-"+id)
	for _, d := range []string{dir, run} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	e := &dockerEngine{t: t, host: "unix://" + filepath.Join(run, "docker.sock"), dir: dir}
	logf, err := os.Create(filepath.Join(t.TempDir(), "dockerd.log"))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("dockerd", "--data-root="+dir, "--exec-root="+filepath.Join(run, "exec"),
		"--pidfile="+filepath.Join(run, "docker.pid"), "--host="+e.host, "--bridge=none", "--iptables=false")
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGTERM}
	if err := cmd.Start(); err != nil {
		t.Fatalf("start dockerd: %v", err)
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(30 * time.Second):
			_ = cmd.Process.Kill()
			<-exited
		}
		for _, d := range []string{dir, run} {
			if err := unmountUnder(d); err != nil {
				t.Error(err)
			}
			if err := os.RemoveAll(d); err != nil {
				t.Errorf("remove %s: %v", d, err)
			}
		}
		_ = logf.Close()
	})
	err = poll.Until(context.Background(), 60*time.Second, 100*time.Millisecond, "dockerd answering on "+e.host, func(ctx context.Context) (bool, error) {
		select {
		case <-exited:
			log, _ := os.ReadFile(logf.Name())
			return false, fmt.Errorf("dockerd exited: %s", tail(string(log), 10))
		default:
		}
		if _, err := e.docker(ctx, "version", "--format", "{{.Server.Version}}"); err != nil {
			return false, poll.Retry("%v", err)
		}
		return true, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// unmountUnder detaches every mount below dir (dockerd leaves the
// bind mount of its default network namespace under its exec root).
func unmountUnder(dir string) error {
	raw, err := os.ReadFile("/proc/self/mounts")
	if err != nil {
		return fmt.Errorf("read mounts: %w", err)
	}
	var errs []error
	for _, line := range strings.Split(string(raw), "\n") {
		f := strings.Fields(line)
		if len(f) < 2 || !strings.HasPrefix(f[1], dir+"/") {
			continue
		}
		if err := syscall.Unmount(f[1], syscall.MNT_DETACH); err != nil {
			errs = append(errs, fmt.Errorf("unmount %s: %w", f[1], err))
		}
	}
	return errors.Join(errs...)
}

// docker runs the docker CLI against the engine and returns its stdout.
func (e *dockerEngine) docker(ctx context.Context, args ...string) (string, error) {
	out, _, err := e.dockerOutputs(ctx, args...)
	return out, err
}

// dockerOutputs is docker returning stdout and stderr.
func (e *dockerEngine) dockerOutputs(ctx context.Context, args ...string) (string, string, error) {
	cmd := exec.CommandContext(ctx, "docker", args...)
	cmd.Env = append(os.Environ(), "DOCKER_HOST="+e.host, "DOCKER_BUILDKIT=0")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return stdout.String(), stderr.String(), fmt.Errorf("docker %s: %w: %s", strings.Join(args, " "), err, tail(stderr.String()+stdout.String(), 15))
	}
	return stdout.String(), stderr.String(), nil
}

// moduleProxy serves the local Go module download cache over the
// GOPROXY protocol (its layout is that protocol) on loopback, so an image
// build fetches the modules of go.sum without a network.
func moduleProxy(t testing.TB) string {
	t.Helper()
	out, err := exec.Command("go", "env", "GOMODCACHE").Output()
	if err != nil {
		t.Fatalf("go env GOMODCACHE: %v", err)
	}
	dir := filepath.Join(strings.TrimSpace(string(out)), "cache", "download")
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.FileServer(http.Dir(dir)), ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = srv.Serve(l) }()
	t.Cleanup(func() { _ = srv.Close() })
	return "http://" + l.Addr().String()
}

// builderRoot is the root file system hack/builder-root.sh makes.
func builderRoot() (string, error) {
	p := os.Getenv("NQOS_BUILDER_ROOT")
	if p == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			return "", err
		}
		p = filepath.Join(home, ".cache", "nqos", "builder-root-bookworm.tar")
	}
	if _, err := os.Stat(p); err != nil {
		return "", fmt.Errorf("%w: run hack/builder-root.sh", err)
	}
	return p, nil
}
