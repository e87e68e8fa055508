package deploytest

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/yaml"

	"github.com/nqos/nqos/internal/kubeapi"
	"github.com/nqos/nqos/internal/ovnnb"
	"github.com/nqos/nqos/internal/ovnnb/nbtest"
	"github.com/nqos/nqos/internal/qos"
)

// world is one test's cluster objects (the OKEP-6815 worked example in a
// namespace of its own) and its Northbound (switch and LSPs created).
type world struct {
	t     testing.TB
	ctx   context.Context
	srv   *kubeapi.Server
	admin *rest.Config
	kube  kubernetes.Interface
	dyn   dynamic.Interface
	ns    string
	nb    nbAccess
	docs  map[string][]byte // "Kind/name" -> YAML, the objects that exist now
}

func newID(t testing.TB) string {
	b := make([]byte, 4)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(b)
}

// nbAccess is how a world reaches its Northbound: ovn-nbctl and the
// address of the test-side reader.
type nbAccess interface {
	MustNBCtl(args ...string) string
	Addr() string
}

var _ nbAccess = (*nbtest.Server)(nil)

func newWorld(t testing.TB, srv *kubeapi.Server, nb nbAccess) *world {
	t.Helper()
	admin := srv.RESTConfig()
	w := &world{t: t, ctx: context.Background(), srv: srv, admin: admin, nb: nb, ns: "vms-" + newID(t), docs: map[string][]byte{},
		kube: kubernetes.NewForConfigOrDie(admin), dyn: dynamic.NewForConfigOrDie(admin)}
	t.Cleanup(w.deleteObjects)
	return w
}

// okepDocs are the worked example's documents with the namespace vms
// replaced by the world's, plus an extra object with tier-production's
// priority (a priority collision, reported as Warning events).
func (w *world) okepDocs() [][]byte {
	raw, err := os.ReadFile(filepath.Join(repoRoot, "internal", "qos", "testdata", "okep-worked-example.yaml"))
	if err != nil {
		w.t.Fatal(err)
	}
	raw = regexp.MustCompile(`\bvms\b`).ReplaceAll(raw, []byte(w.ns))
	docs := bytes.Split(raw, []byte("\n---\n"))
	return append(docs, w.nqosDoc("tier-production-copy", 60, "tier: production", 46))
}

func (w *world) nqosDoc(name string, prio int, selector string, dscp int) []byte {
	return fmt.Appendf(nil, `apiVersion: k8s.ovn.org/v1alpha1
kind: NetworkQoS
metadata: {name: %s, namespace: %s}
spec:
  networkSelectors:
  - networkSelectionType: NetworkAttachmentDefinitions
    networkAttachmentDefinitionSelector:
      namespaceSelector: {}
      networkSelector: {matchLabels: {nqos-network: tenant-blue}}
  podSelector: {matchLabels: {%s}}
  priority: %d
  egress:
  - dscp: %d
`, name, w.ns, selector, prio, dscp)
}

func (w *world) podDoc(name, node, labels string) []byte {
	return fmt.Appendf(nil, `apiVersion: v1
kind: Pod
metadata:
  name: %s
  namespace: %s
  labels: {%s}
  annotations:
    k8s.v1.cni.cncf.io/networks: tenant-blue
spec:
  nodeName: %s
  containers: [{name: compute, image: virt-launcher}]
`, name, w.ns, labels, node)
}

// create creates the objects of docs (in order) and remembers them.
func (w *world) create(docs ...[]byte) {
	w.t.Helper()
	for _, d := range docs {
		u := &unstructured.Unstructured{}
		if err := yaml.Unmarshal(d, &u.Object); err != nil {
			w.t.Fatalf("decode %s: %v", d, err)
		}
		if u.GetKind() == "" {
			continue // a comment-only document
		}
		gvr, ok := resourceOf[u.GetKind()]
		if !ok {
			w.t.Fatalf("no resource for kind %s", u.GetKind())
		}
		var err error
		if u.GetNamespace() == "" {
			_, err = w.dyn.Resource(gvr).Create(w.ctx, u, metav1.CreateOptions{})
		} else {
			_, err = w.dyn.Resource(gvr).Namespace(u.GetNamespace()).Create(w.ctx, u, metav1.CreateOptions{})
		}
		if err != nil {
			w.t.Fatalf("create %s %s: %v", u.GetKind(), u.GetName(), err)
		}
		w.docs[u.GetKind()+"/"+u.GetName()] = d
	}
}

// remove deletes one object created by create.
func (w *world) remove(kind, name string) {
	w.t.Helper()
	zero := int64(0)
	if err := w.dyn.Resource(resourceOf[kind]).Namespace(w.ns).Delete(w.ctx, name, metav1.DeleteOptions{GracePeriodSeconds: &zero}); err != nil {
		w.t.Fatalf("delete %s %s: %v", kind, name, err)
	}
	delete(w.docs, kind+"/"+name)
}

// deleteObjects removes the world's namespaced objects (a namespace never
// finishes deleting without a controller-manager), so later worlds'
// controllers do not see them.
func (w *world) deleteObjects() {
	zero := int64(0)
	for _, kind := range []string{"NetworkQoS", "Pod", "NetworkAttachmentDefinition"} {
		err := w.dyn.Resource(resourceOf[kind]).Namespace(w.ns).DeleteCollection(w.ctx,
			metav1.DeleteOptions{GracePeriodSeconds: &zero}, metav1.ListOptions{})
		if err != nil {
			w.t.Errorf("cleanup: delete %s in %s: %v", kind, w.ns, err)
		}
	}
}

// desired compiles the objects that exist now: the controller's oracle.
func (w *world) desired() qos.Desired {
	w.t.Helper()
	keys := make([]string, 0, len(w.docs))
	for k := range w.docs {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var all [][]byte
	for _, k := range keys {
		all = append(all, w.docs[k])
	}
	in, err := qos.DecodeManifests(bytes.NewReader(bytes.Join(all, []byte("\n---\n"))), w.ns)
	if err != nil {
		w.t.Fatalf("decode the world's manifests: %v", err)
	}
	return qos.Compile(in)
}

// prepareNB creates the localnet switch and an LSP for every pod any
// port group of desired (and of the extra pod names) holds.
func (w *world) prepareNB(d qos.Desired, extraPorts ...string) {
	w.t.Helper()
	sw := qos.SwitchName("tenant-blue", "localnet")
	w.nb.MustNBCtl("--may-exist", "ls-add", sw)
	ports := slices.Clone(extraPorts)
	for _, pg := range d.PortGroups {
		ports = append(ports, pg.Ports...)
	}
	slices.Sort(ports)
	for _, p := range slices.Compact(ports) {
		w.nb.MustNBCtl("--may-exist", "lsp-add", sw, p)
	}
}

// lsp is the LSP name of a pod of the world on tenant-blue.
func (w *world) lsp(pod string) string { return qos.LogicalPortName(w.ns, "tenant-blue", w.ns, pod) }

// reader is a test-side NB client, closed at test end.
func (w *world) reader() *ovnnb.Client {
	w.t.Helper()
	c, err := ovnnb.Dial(w.ctx, w.nb.Addr(), slog.New(slog.DiscardHandler))
	if err != nil {
		w.t.Fatalf("dial NB: %v", err)
	}
	w.t.Cleanup(c.Close)
	return c
}

// rowsDiff compares the NB's owned rows with the compiler's; "" means equal.
func rowsDiff(got, want qos.Desired) string {
	g, wl := got.RowLines(), want.RowLines()
	var out []string
	for k, n := range wl {
		if g[k] != n {
			out = append(out, fmt.Sprintf("want %dx got %dx %s", n, g[k], k))
		}
	}
	for k, n := range g {
		if _, ok := wl[k]; !ok {
			out = append(out, fmt.Sprintf("unexpected %dx %s", n, k))
		}
	}
	slices.Sort(out)
	return strings.Join(out[:min(len(out), 4)], "; ")
}
