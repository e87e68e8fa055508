package kubeapi

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
)

// BenchmarkStartCreateClose measures what every testbed pays: Start with
// the project's CRDs, the first create of a custom resource, Close.
// Reported: start-s, first-create-ms, close-s (per iteration).
func BenchmarkStartCreateClose(b *testing.B) {
	if _, err := BinDir(); err != nil {
		b.Skipf("kube binaries not built: %v", err)
	}
	crds, err := filepath.Glob("../../config/crd/*.yaml")
	if err != nil || len(crds) == 0 {
		b.Fatalf("project CRDs: %v %v", crds, err)
	}
	gvr := schema.GroupVersionResource{Group: "k8s.cni.cncf.io", Version: "v1", Resource: "network-attachment-definitions"}
	var start, create, stop time.Duration
	n := 0
	for b.Loop() {
		t0 := time.Now()
		s, err := Start(context.Background(), Options{Dir: b.TempDir(), CRDFiles: crds})
		if err != nil {
			b.Fatalf("Start: %v", err)
		}
		t1 := time.Now()
		nad := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "k8s.cni.cncf.io/v1", "kind": "NetworkAttachmentDefinition",
			"metadata": map[string]any{"name": "n1", "namespace": "default"}, "spec": map[string]any{"config": "{}"}}}
		_, cerr := dynamic.NewForConfigOrDie(s.RESTConfig()).Resource(gvr).Namespace("default").Create(context.Background(), nad, metav1.CreateOptions{})
		t2 := time.Now()
		if err := s.Close(); err != nil {
			b.Fatalf("Close: %v", err)
		}
		if cerr != nil {
			b.Fatalf("create NetworkAttachmentDefinition: %v", cerr)
		}
		start, create, stop = start+t1.Sub(t0), create+t2.Sub(t1), stop+time.Since(t2)
		n++
	}
	b.ReportMetric(start.Seconds()/float64(n), "start-s")
	b.ReportMetric(float64(create.Milliseconds())/float64(n), "first-create-ms")
	b.ReportMetric(stop.Seconds()/float64(n), "close-s")
}
