package kubeapi

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

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
	_, err := readCRDs([]string{bad}, nil)
	if err == nil || !strings.Contains(err.Error(), "document 1") {
		t.Fatalf("readCRDs error = %v, want one naming document 1", err)
	}
}

func TestCreatesFrom(t *testing.T) {
	base := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	for _, tc := range []struct {
		name           string
		seen, recorded time.Time
		want           time.Time
	}{
		{"seen at once: two seconds after the sighting", base.Add(300 * time.Millisecond), base, base.Add(2300 * time.Millisecond)},
		{"seen late: three seconds after the recorded second", base.Add(5 * time.Second), base, base.Add(3 * time.Second)},
		{"recorded with a fraction: truncated to its second", base.Add(5 * time.Second), base.Add(900 * time.Millisecond), base.Add(3 * time.Second)},
	} {
		if got := createsFrom(tc.seen, tc.recorded); !got.Equal(tc.want) {
			t.Errorf("%s: createsFrom = %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestStartRejectsInvalidCRD(t *testing.T) {
	requireBins(t)
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.yaml")
	crd := "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata: {name: gadgets.test.nqos.io}\n" +
		"spec: {group: test.nqos.io, scope: Namespaced, names: {plural: gadgets, kind: Gadget}, versions: []}\n"
	if err := os.WriteFile(bad, []byte(crd), 0o644); err != nil {
		t.Fatal(err)
	}
	began := time.Now()
	_, err := Start(context.Background(), Options{Dir: filepath.Join(dir, "kube"), CRDFiles: []string{bad}})
	if err == nil || !strings.Contains(err.Error(), "gadgets.test.nqos.io") || !apierrors.IsInvalid(err) {
		t.Fatalf("Start error = %v, want the CRD named and Invalid", err)
	}
	if took := time.Since(began); took >= startTimeout {
		t.Errorf("Start took %v: an invalid CRD must not be retried until the start timeout", took)
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

// The server holds a create inside a CRD's create window for the whole
// window: Start returns only after it, so a create made at once is not
// held.
// It installs the project's CRDs, which are Established late enough for
// their window to outlast /readyz.
func TestFirstCreateAfterStartNotHeld(t *testing.T) {
	requireBins(t)
	crds, err := filepath.Glob("../../config/crd/*.yaml")
	if err != nil || len(crds) == 0 {
		t.Fatalf("project CRDs: %v %v", crds, err)
	}
	s, err := Start(context.Background(), Options{Dir: t.TempDir(), CRDFiles: crds})
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	defer func() {
		if err := s.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	}()
	dyn := dynamic.NewForConfigOrDie(s.RESTConfig())
	gvr := schema.GroupVersionResource{Group: "k8s.cni.cncf.io", Version: "v1", Resource: "network-attachment-definitions"}
	nad := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "k8s.cni.cncf.io/v1", "kind": "NetworkAttachmentDefinition",
		"metadata": map[string]any{"name": "n1", "namespace": "default"}, "spec": map[string]any{"config": "{}"}}}
	began := time.Now()
	if _, err := dyn.Resource(gvr).Namespace("default").Create(context.Background(), nad, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create NetworkAttachmentDefinition: %v", err)
	}
	if took := time.Since(began); took >= createWindow {
		t.Errorf("first create took %v: the server held it, so Start returned inside the CRD's %v create window", took, createWindow)
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
