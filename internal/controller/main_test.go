package controller

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"k8s.io/client-go/rest"

	"github.com/nqos/nqos/internal/kubeapi"
	"github.com/nqos/nqos/internal/testenv"
)

// testCluster is the one kube-apiserver shared by every test of this
// binary (each test uses fresh namespaces); cfg is nil and skipErr says
// why when the binaries are not built or -short is set.
type testCluster struct {
	cfg     *rest.Config
	skipErr error
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
	flag.Parse() // testing.Short below
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
	if testing.Short() {
		cluster.skipErr = errors.New("-short")
		return nil, "", nil
	}
	if _, err := kubeapi.BinDir(); err != nil {
		cluster.skipErr = err
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
	testenv.Check(t, "kube-apiserver and etcd binaries", cluster.skipErr)
	return rest.CopyConfig(cluster.cfg)
}
