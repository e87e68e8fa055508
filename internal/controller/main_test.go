package controller

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"k8s.io/client-go/rest"

	"github.com/nqos/nqos/internal/kubeapi"
)

// testCluster is the one kube-apiserver shared by every test of this
// binary (each test uses fresh namespaces); nil with skipReason set when
// the binaries are not built.
type testCluster struct {
	cfg        *rest.Config
	skipReason string
}

var cluster testCluster

// crdFiles are the CRDs the controller reads.
var crdFiles = []string{
	"k8s.ovn.org_networkqoses.yaml",
	"k8s.cni.cncf.io_network-attachment-definitions.yaml",
	"k8s.ovn.org_clusteruserdefinednetworks.yaml",
}

func TestMain(m *testing.M) {
	os.Exit(runTests(m))
}

func runTests(m *testing.M) int {
	srv, dir, err := startCluster()
	if err != nil {
		fmt.Fprintf(os.Stderr, "controller tests: %v\n", err)
		return 1
	}
	if srv == nil {
		return m.Run()
	}
	defer os.RemoveAll(dir)
	cluster.cfg = srv.RESTConfig()
	code := m.Run()
	if err := srv.Close(); err != nil { // a daemon that died during the tests
		fmt.Fprintf(os.Stderr, "controller tests: %v\n", err)
		code = max(code, 1)
	}
	return code
}

func startCluster() (*kubeapi.Server, string, error) {
	if _, err := kubeapi.BinDir(); err != nil {
		cluster.skipReason = err.Error()
		return nil, "", nil
	}
	var files []string
	for _, f := range crdFiles {
		p := filepath.Join("..", "..", "config", "crd", f)
		if _, err := os.Stat(p); err != nil {
			return nil, "", fmt.Errorf("CRD manifest missing: %w", err)
		}
		files = append(files, p)
	}
	dir, err := os.MkdirTemp("", "nqos-controller-test-")
	if err != nil {
		return nil, "", err
	}
	srv, err := kubeapi.Start(context.Background(), kubeapi.Options{Dir: dir, CRDFiles: files})
	if err != nil {
		os.RemoveAll(dir)
		return nil, "", err
	}
	return srv, dir, nil
}

func requireCluster(t testing.TB) *rest.Config {
	t.Helper()
	if cluster.cfg == nil {
		t.Skipf("no kube-apiserver: %s", cluster.skipReason)
	}
	return rest.CopyConfig(cluster.cfg)
}
