package deploytest

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/nqos/nqos/internal/kubeapi"
	"github.com/nqos/nqos/internal/testenv"
)

// repoRoot is the repository root, relative to this package.
var repoRoot = filepath.Join("..", "..", "..")

// shared is the one kube-apiserver of this test binary, started by the
// first test that needs it and stopped after the last.
type shared struct {
	once sync.Once
	srv  *kubeapi.Server
	dir  string
	err  error
}

func (s *shared) get(t testing.TB) *kubeapi.Server {
	t.Helper()
	_, err := kubeapi.BinDir()
	testenv.Check(t, "kube-apiserver and etcd binaries", err)
	s.once.Do(func() {
		crds, err := filepath.Glob(filepath.Join(repoRoot, "config", "crd", "*.yaml"))
		if err != nil || len(crds) == 0 {
			s.err = fmt.Errorf("CRD manifests under config/crd: %v (found %d)", err, len(crds))
			return
		}
		if s.dir, s.err = os.MkdirTemp("", "nqos-deploytest-"); s.err != nil {
			return
		}
		s.srv, s.err = kubeapi.Start(context.Background(), kubeapi.Options{Dir: s.dir, CRDFiles: crds, Audit: true})
	})
	if s.err != nil {
		t.Fatalf("kube-apiserver: %v", s.err)
	}
	return s.srv
}

func (s *shared) close() error {
	if s.srv == nil {
		return nil
	}
	err := s.srv.Close()
	if rmErr := os.RemoveAll(s.dir); err == nil {
		err = rmErr
	}
	return err
}

// deps holds the shared state of this test binary.
type deps struct {
	cluster shared
	binary  builtBinary
}

func TestMain(m *testing.M) { os.Exit(run(m)) }

func run(m *testing.M) int {
	d := &deps{}
	the = d
	code := m.Run()
	if err := d.cluster.close(); err != nil {
		fmt.Fprintf(os.Stderr, "deploytest: kube-apiserver: %v\n", err)
		code = max(code, 1)
	}
	d.binary.remove()
	return code
}

// the is set once by TestMain before any test runs and never replaced.
var the *deps
