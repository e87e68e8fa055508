package deploy

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	osexec "os/exec"
	"path/filepath"
	"strings"
	"time"

	"sigs.k8s.io/kind/pkg/exec"
)

// BuildMode says when Deploy builds the image.
type BuildMode string

const (
	BuildNever   BuildMode = "never"   // the engine must have it
	BuildMissing BuildMode = "missing" // build when the engine lacks it
	BuildAlways  BuildMode = "always"  // build (the engine's layer cache keeps it quick)
)

// builderImage is the Go builder imported from hack/builder-root.sh's root
// file system: the machine has no registry to pull golang:1.26 from.
const builderImage = "nqos/go-builder:bookworm-local"

// DefaultBuilderRoot is hack/builder-root.sh's output: $NQOS_BUILDER_ROOT,
// else ~/.cache/nqos/builder-root-bookworm.tar.
func DefaultBuilderRoot() string {
	if p := os.Getenv("NQOS_BUILDER_ROOT"); p != "" {
		return p
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return ""
	}
	return filepath.Join(home, ".cache", "nqos", "builder-root-bookworm.tar")
}

// buildImage builds ref from build/Containerfile in repo on the engine, as
// internal/controller/deploytest's image test does: FROM the local builder
// image, RUNTIME scratch, host network, modules from this machine's module
// cache served over HTTP, no checksum database. The build's output goes to
// out.
func buildImage(ctx context.Context, repo, ref, builderRoot string, out io.Writer) error {
	if imageID(ctx, builderImage) == "" {
		if _, err := os.Stat(builderRoot); err != nil {
			return fmt.Errorf("builder root file system: %w (run hack/builder-root.sh)", err)
		}
		if _, err := docker(ctx, "import", builderRoot, builderImage); err != nil {
			return fmt.Errorf("builder image %s: %w", builderImage, err)
		}
	}
	proxy, stop, err := moduleProxy(ctx)
	if err != nil {
		return err
	}
	defer stop()
	cmd := exec.CommandContext(ctx, "docker", "build", "--network=host", "-f", filepath.Join(repo, containerfile),
		"--build-arg", "BUILDER="+builderImage, "--build-arg", "RUNTIME=scratch",
		"--build-arg", "GOPROXY="+proxy, "--build-arg", "GOSUMDB=off", "-t", ref, repo)
	cmd.SetEnv(append(os.Environ(), "DOCKER_BUILDKIT=0")...)
	if err := cmd.SetStdout(out).SetStderr(out).Run(); err != nil {
		return fmt.Errorf("build image %s from %s: %w", ref, filepath.Join(repo, containerfile), err)
	}
	return nil
}

// moduleProxyAddr is where the module proxy listens. The Containerfile
// bakes GOPROXY into an ENV, so a URL that stays the same keeps the
// engine's cache of the `go mod download` layer; when the port is taken
// any free one serves, at the price of that layer.
const moduleProxyAddr = "127.0.0.1:7641"

// moduleProxy serves the module cache's download directory as a GOPROXY
// on a loopback port until stop is called.
func moduleProxy(ctx context.Context) (url string, stop func(), err error) {
	gomodcache, err := osexec.CommandContext(ctx, "go", "env", "GOMODCACHE").Output()
	if err != nil {
		return "", nil, fmt.Errorf("go env GOMODCACHE: %w", err)
	}
	dir := filepath.Join(strings.TrimSpace(string(gomodcache)), "cache", "download")
	l, err := net.Listen("tcp", moduleProxyAddr)
	if err != nil {
		l, err = net.Listen("tcp", "127.0.0.1:0")
	}
	if err != nil {
		return "", nil, fmt.Errorf("module proxy for %s: %w", dir, err)
	}
	srv := &http.Server{Handler: http.FileServer(http.Dir(dir)), ReadHeaderTimeout: 5 * time.Second}
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := srv.Serve(l); err != nil && !errors.Is(err, http.ErrServerClosed) {
			fmt.Fprintf(os.Stderr, "module proxy for %s: %v\n", dir, err)
		}
	}()
	return "http://" + l.Addr().String(), func() { _ = srv.Close(); <-done }, nil
}
