package main

import (
	"context"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"

	"github.com/nqos/nqos/internal/freeport"
	"github.com/nqos/nqos/internal/kubeapi"
	"github.com/nqos/nqos/internal/ovnnb/nbtest"
	"github.com/nqos/nqos/internal/poll"
	"github.com/nqos/nqos/internal/testenv"
)

// The command (an alias of nqos-controller, with the old flag names
// --nb and --metrics-addr) runs against a real API server and NB,
// reconciles an object and serves the metrics.
func TestControllerCommand(t *testing.T) {
	_, err := kubeapi.BinDir()
	testenv.Check(t, "kube-apiserver and etcd binaries", err)
	nb := nbtest.Start(t)
	crds, _ := filepath.Glob("../../config/crd/*.yaml")
	srv, err := kubeapi.Start(context.Background(), kubeapi.Options{Dir: t.TempDir(), CRDFiles: crds})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Close() })
	addr, err := freeport.Addr()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- runController(ctx, []string{"--kubeconfig", srv.KubeconfigPath(), "--nb", nb.Addr(), "--metrics-addr", addr})
	}()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("controller: %v", err)
			}
		case <-time.After(30 * time.Second):
			t.Errorf("controller did not stop")
		}
	})
	nb.MustNBCtl("ls-add", "blue_ovn_localnet_switch")
	createObjects(t, srv)
	err = poll.Until(context.Background(), 30*time.Second, 50*time.Millisecond, "a successful reconcile in metrics and NB",
		func(context.Context) (bool, error) {
			body := scrape(addr)
			if !strings.Contains(body, `nqos_reconcile_total{result="success"}`) || !strings.Contains(body, "nqos_queue_depth") {
				return false, poll.Retry("metrics: %.300s", body)
			}
			out, err := nb.NBCtl("--bare", "--columns=match", "list", "QoS")
			if err != nil {
				return false, err
			}
			return strings.Contains(out, "inport == @"), nil
		})
	if err != nil {
		t.Fatal(err)
	}
}

func scrape(addr string) string {
	resp, err := http.Get("http://" + addr + "/metrics")
	if err != nil {
		return err.Error()
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return string(b)
}

func createObjects(t *testing.T, srv *kubeapi.Server) {
	ctx := context.Background()
	kc := kubernetes.NewForConfigOrDie(srv.RESTConfig())
	dyn := dynamic.NewForConfigOrDie(srv.RESTConfig())
	if _, err := kc.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "vms"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	nad := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "k8s.cni.cncf.io/v1", "kind": "NetworkAttachmentDefinition",
		"metadata": map[string]any{"name": "blue", "namespace": "vms", "labels": map[string]any{"net": "blue"}},
		"spec":     map[string]any{"config": `{"cniVersion":"1.0.0","name":"blue","type":"ovn-k8s-cni-overlay","topology":"localnet","netAttachDefName":"vms/blue"}`},
	}}
	nq := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "k8s.ovn.org/v1alpha1", "kind": "NetworkQoS",
		"metadata": map[string]any{"name": "gold", "namespace": "vms"},
		"spec": map[string]any{"priority": int64(10), "egress": []any{map[string]any{"dscp": int64(46)}},
			"networkSelectors": []any{map[string]any{"networkSelectionType": "NetworkAttachmentDefinitions",
				"networkAttachmentDefinitionSelector": map[string]any{"namespaceSelector": map[string]any{},
					"networkSelector": map[string]any{"matchLabels": map[string]any{"net": "blue"}}}}}},
	}}
	for gvr, obj := range map[schema.GroupVersionResource]*unstructured.Unstructured{
		{Group: "k8s.cni.cncf.io", Version: "v1", Resource: "network-attachment-definitions"}: nad,
		{Group: "k8s.ovn.org", Version: "v1alpha1", Resource: "networkqoses"}:                 nq,
	} {
		if _, err := dyn.Resource(gvr).Namespace("vms").Create(ctx, obj, metav1.CreateOptions{}); err != nil {
			t.Fatalf("create %s: %v", gvr.Resource, err)
		}
	}
}
