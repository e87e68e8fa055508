// Package kubeapi owns a real Kubernetes control plane for tests and the
// testbed: it launches etcd and kube-apiserver (built from source by
// hack/kube-bins.sh) on free loopback ports, installs CRDs and waits until
// they serve, writes a kubeconfig, and stops both processes on Close.
package kubeapi

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"k8s.io/client-go/rest"
)

// binVersion names the cache directory hack/kube-bins.sh fills.
const binVersion = "kube-v1.37.2-etcd3.7.0-static"

// BinDir returns the directory holding the kube-apiserver and etcd
// binaries: $NQOS_KUBE_BIN_DIR, else ~/.cache/nqos/kube-v1.37.2-etcd3.7.0-static.
// It fails, saying how to build them, when either binary is missing.
func BinDir() (string, error) {
	dir := os.Getenv("NQOS_KUBE_BIN_DIR")
	if dir == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			return "", fmt.Errorf("kube binaries: no home directory: %w", err)
		}
		dir = filepath.Join(home, ".cache", "nqos", binVersion)
	}
	for _, b := range []string{"kube-apiserver", "etcd"} {
		p := filepath.Join(dir, b)
		st, err := os.Stat(p)
		if err != nil || st.IsDir() || st.Mode()&0o111 == 0 {
			return "", fmt.Errorf("kube binaries: %s missing in %s: run hack/kube-bins.sh (or set NQOS_KUBE_BIN_DIR)", b, dir)
		}
	}
	return dir, nil
}

// Options configures Start.
type Options struct {
	// Dir is the working directory (etcd data, certificates, tokens,
	// kubeconfig). Empty: a temporary directory removed by Close.
	Dir string
	// BinDir holds kube-apiserver and etcd. Empty: BinDir().
	BinDir string
	// CRDFiles are CRD manifests installed and awaited before Start returns.
	CRDFiles []string
	// CRDs are CRD manifests given by contents (name: for messages),
	// installed like CRDFiles.
	CRDs []CRDManifest
	// LogDir receives etcd.log and kube-apiserver.log. Empty: Dir.
	LogDir string
	// Audit logs every request (user, verb, resource, response code) to
	// audit.log in Dir; AuditEvents reads it.
	Audit bool
}

// Server is a running etcd + kube-apiserver pair.
type Server struct {
	dir        string
	ownDir     bool
	etcd       *process
	apiserver  *process
	config     *rest.Config
	kubeconfig string
	auditLog   string // Options.Audit
}

// startTimeout bounds the whole boot (both processes, CRDs).
const startTimeout = 90 * time.Second

// Start launches etcd and kube-apiserver, installs the CRDs once the
// server serves, waits for /readyz, until each CRD is Established and
// listable and until creates of its resources are no longer delayed. On any error
// everything started so far is stopped again.
func Start(ctx context.Context, opts Options) (*Server, error) {
	ctx, cancel := context.WithTimeout(ctx, startTimeout)
	defer cancel()
	s, err := newServer(opts)
	if err != nil {
		return nil, err
	}
	if err := s.boot(ctx, opts); err != nil {
		return nil, errors.Join(err, s.Close())
	}
	return s, nil
}

func newServer(opts Options) (*Server, error) {
	s := &Server{dir: opts.Dir}
	if s.dir == "" {
		d, err := os.MkdirTemp("", "nqos-kubeapi-")
		if err != nil {
			return nil, fmt.Errorf("kubeapi: working directory: %w", err)
		}
		s.dir, s.ownDir = d, true
	}
	if err := os.MkdirAll(s.dir, 0o755); err != nil {
		return nil, fmt.Errorf("kubeapi: working directory %s: %w", s.dir, err)
	}
	return s, nil
}

func (s *Server) boot(ctx context.Context, opts Options) error {
	bin := opts.BinDir
	if bin == "" {
		var err error
		if bin, err = BinDir(); err != nil {
			return err
		}
	}
	logDir := opts.LogDir
	if logDir == "" {
		logDir = s.dir
	}
	if err := os.MkdirAll(logDir, 0o755); err != nil {
		return fmt.Errorf("kubeapi: log directory %s: %w", logDir, err)
	}
	crds, err := readCRDs(opts.CRDFiles, opts.CRDs)
	if err != nil {
		return err
	}
	etcdURL, err := s.startEtcd(ctx, bin, logDir)
	if err != nil {
		return err
	}
	var extra []string
	if opts.Audit {
		var err error
		if extra, err = s.auditFlags(); err != nil {
			return err
		}
	}
	if err := s.startAPIServer(ctx, bin, logDir, etcdURL, extra...); err != nil {
		return err
	}
	if err := s.writeKubeconfig(); err != nil {
		return err
	}
	// The CRDs go in as soon as the server serves, while its post-start
	// hooks (RBAC bootstrap, the longest part) still run: by /readyz they
	// are Established, mostly past their create window (crd.go).
	installed := make(chan crdInstall, 1)
	go func() { installed <- installCRDs(ctx, s.config, crds) }()
	ready := s.apiserver.poll(ctx, "ready", func(ctx context.Context) error { return readyz(ctx, s.config) })
	in := <-installed
	if err := errors.Join(ready, in.err); err != nil {
		return err
	}
	return waitCreateWindow(ctx, in.createsFrom)
}

// RESTConfig returns a copy of the admin client configuration.
func (s *Server) RESTConfig() *rest.Config { return rest.CopyConfig(s.config) }

// KubeconfigPath is the admin kubeconfig written into Dir.
func (s *Server) KubeconfigPath() string { return s.kubeconfig }

// Close stops kube-apiserver, then etcd, and waits for both. It removes
// the working directory only when Start created it. kube-apiserver keeps
// its state in etcd alone, so it is killed instead of drained (its
// graceful shutdown takes 1.5 s here); etcd gets SIGTERM.
func (s *Server) Close() error {
	var errs []error
	if s.apiserver != nil {
		errs = append(errs, s.apiserver.kill())
		s.apiserver = nil
	}
	if s.etcd != nil {
		errs = append(errs, s.etcd.stop())
		s.etcd = nil
	}
	if s.ownDir {
		errs = append(errs, os.RemoveAll(s.dir))
		s.ownDir = false
	}
	return errors.Join(errs...)
}
