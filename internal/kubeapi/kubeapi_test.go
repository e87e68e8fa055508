package kubeapi

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
)

func TestBinDirMissing(t *testing.T) {
	t.Setenv("NQOS_KUBE_BIN_DIR", t.TempDir())
	_, err := BinDir()
	if err == nil || !strings.Contains(err.Error(), "hack/kube-bins.sh") {
		t.Fatalf("BinDir() error = %v, want one naming hack/kube-bins.sh", err)
	}
}

func TestReadCRDsRejectsBadInput(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.yaml")
	if err := os.WriteFile(bad, []byte("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n---\nkind: CustomResourceDefinition\nbogus: 1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := readCRDs([]string{bad})
	if err == nil || !strings.Contains(err.Error(), "document 1") {
		t.Fatalf("readCRDs error = %v, want one naming document 1", err)
	}
}

// requireBins skips under -short and when the binaries are not built.
func requireBins(t *testing.T) {
	t.Helper()
	if testing.Short() {
		t.Skip("-short: runs etcd and kube-apiserver")
	}
	if _, err := BinDir(); err != nil {
		t.Skipf("kube binaries not built: %v", err)
	}
}

func startServer(t *testing.T) *Server {
	t.Helper()
	requireBins(t)
	dir := t.TempDir()
	s, err := Start(context.Background(), Options{Dir: dir, CRDFiles: []string{"testdata/widgets.yaml"}, LogDir: filepath.Join(dir, "logs")})
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return s
}

func TestStartServesCoreAndCRDs(t *testing.T) {
	s := startServer(t)
	ctx := context.Background()

	// The kubeconfig file and the REST config reach the same server.
	fromFile, err := clientcmd.BuildConfigFromFlags("", s.KubeconfigPath())
	if err != nil {
		t.Fatalf("kubeconfig: %v", err)
	}
	kc := kubernetes.NewForConfigOrDie(fromFile)
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "kubeapi-test"}}
	if _, err := kc.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create namespace: %v", err)
	}
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: ns.Name},
		Spec:       corev1.PodSpec{NodeName: "n1", Containers: []corev1.Container{{Name: "c", Image: "none"}}},
	}
	if _, err := kc.CoreV1().Pods(ns.Name).Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create pod (ServiceAccount admission must be off): %v", err)
	}

	dyn := dynamic.NewForConfigOrDie(s.RESTConfig())
	gvr := schema.GroupVersionResource{Group: "test.nqos.io", Version: "v1", Resource: "widgets"}
	good := widget(ns.Name, "w1", 3)
	created, err := dyn.Resource(gvr).Namespace(ns.Name).Create(ctx, good, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create widget: %v", err)
	}
	// The status subresource stores status and ignores spec changes.
	if err := unstructured.SetNestedField(created.Object, "ok", "status", "phase"); err != nil {
		t.Fatal(err)
	}
	if err := unstructured.SetNestedField(created.Object, int64(4), "spec", "size"); err != nil {
		t.Fatal(err)
	}
	if _, err := dyn.Resource(gvr).Namespace(ns.Name).UpdateStatus(ctx, created, metav1.UpdateOptions{}); err != nil {
		t.Fatalf("update widget status: %v", err)
	}
	stored, err := dyn.Resource(gvr).Namespace(ns.Name).Get(ctx, "w1", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("get widget: %v", err)
	}
	phase, _, _ := unstructured.NestedString(stored.Object, "status", "phase")
	size, _, _ := unstructured.NestedInt64(stored.Object, "spec", "size")
	if phase != "ok" || size != 3 {
		t.Fatalf("stored widget: status.phase %q spec.size %d, want \"ok\" and 3 (status written, spec untouched)", phase, size)
	}
	// Schema validation is enforced: size 0 is below the minimum.
	_, err = dyn.Resource(gvr).Namespace(ns.Name).Create(ctx, widget(ns.Name, "w2", 0), metav1.CreateOptions{})
	if !apierrors.IsInvalid(err) {
		t.Fatalf("create invalid widget: error %v, want Invalid", err)
	}
}

func widget(ns, name string, size int64) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "test.nqos.io/v1",
		"kind":       "Widget",
		"metadata":   map[string]any{"name": name, "namespace": ns},
		"spec":       map[string]any{"size": size},
	}}
}

func TestCloseStopsProcesses(t *testing.T) {
	requireBins(t)
	s, err := Start(context.Background(), Options{})
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	pids := []int{s.apiserver.cmd.Process.Pid, s.etcd.cmd.Process.Pid}
	dir := s.dir
	if err := s.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	for _, pid := range pids {
		if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
			t.Errorf("process %d still exists after Close (kill 0: %v)", pid, err)
		}
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("own temporary directory %s not removed: %v", dir, err)
	}
}

// TestCloseReportsDeadDaemon: a control-plane process that died before
// Close is an error naming it, and Close still stops the other one.
func TestCloseReportsDeadDaemon(t *testing.T) {
	requireBins(t)
	s, err := Start(context.Background(), Options{})
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	apiserver := s.apiserver.cmd.Process.Pid
	if err := s.etcd.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	<-s.etcd.exited
	err = s.Close()
	if err == nil || !strings.Contains(err.Error(), "etcd had exited before Close") {
		t.Fatalf("Close error %v, want one saying etcd had exited", err)
	}
	if err := syscall.Kill(apiserver, 0); !errors.Is(err, syscall.ESRCH) {
		t.Errorf("kube-apiserver %d still exists after Close (kill 0: %v)", apiserver, err)
	}
}
