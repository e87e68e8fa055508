package cni

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/yaml"

	"github.com/containernetworking/cni/pkg/skel"

	nadv1 "github.com/nqos/nqos/api/nad/v1"
	"github.com/nqos/nqos/internal/kubeapi"
	"github.com/nqos/nqos/internal/netns"
	"github.com/nqos/nqos/internal/nettest"
	"github.com/nqos/nqos/internal/poll"
	"github.com/nqos/nqos/internal/testenv"
)

// Files of the repository the integration test uses: the NAD CRD and the
// RBAC nqos-kind up installs for the plugin.
const (
	nadCRDFile = "../../config/crd/k8s.cni.cncf.io_network-attachment-definitions.yaml"
	rbacFile   = "../../tools/kind/internal/cluster/cni/rbac.yaml"
)

// world is a real kube-apiserver with the NAD CRD and the plugin's RBAC,
// and a private OVS (netdev br-int) in the "node" namespace.
type world struct {
	t      *testing.T
	ctx    context.Context
	bed    *nettest.Bed
	ovs    *nettest.OVS
	node   string // namespace of OVS and the node ends
	kube   kubernetes.Interface
	dyn    dynamic.Interface
	plugin Plugin
	conf   string // the plugin's config, without prevResult
}

func newWorld(t *testing.T) *world {
	t.Helper()
	bed := nettest.New(t, "cni", "ovs-vsctl")
	bin, err := kubeapi.BinDir()
	testenv.Check(t, "kube-apiserver and etcd", err)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	t.Cleanup(cancel)
	srv, err := kubeapi.Start(ctx, kubeapi.Options{Dir: t.TempDir(), BinDir: bin, CRDFiles: []string{nadCRDFile}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := srv.Close(); err != nil {
			t.Error(err)
		}
	})
	w := &world{t: t, ctx: ctx, bed: bed, node: bed.Netns("node")}
	if w.kube, err = kubernetes.NewForConfig(srv.RESTConfig()); err != nil {
		t.Fatal(err)
	}
	if w.dyn, err = dynamic.NewForConfig(srv.RESTConfig()); err != nil {
		t.Fatal(err)
	}
	w.applyRBAC()
	cfg, err := srv.ServiceAccountConfig(ctx, "kube-system", "nqos-cni")
	if err != nil {
		t.Fatal(err)
	}
	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	if err := kubeapi.WriteKubeconfig(cfg, kubeconfig); err != nil {
		t.Fatal(err)
	}
	w.ovs = bed.StartOVS(w.node)
	w.ovs.AddNetdevBridge(DefaultBridge)
	w.plugin = Plugin{HostNS: netns.Named(w.node)}
	w.conf = fmt.Sprintf(`"cniVersion":"1.0.0","name":"nqos-bridge","type":"nqos-cni","kubeconfig":%q,"ovsDB":%q`, kubeconfig, w.ovs.DB)
	for _, ns := range []string{"vms", "net"} {
		if _, err := w.kube.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	return w
}

// applyRBAC creates the ServiceAccount, ClusterRole and binding of
// rbacFile and waits until the authorizer allows what the role grants.
func (w *world) applyRBAC() {
	w.t.Helper()
	raw, err := os.ReadFile(rbacFile)
	if err != nil {
		w.t.Fatal(err)
	}
	var role *rbacv1.ClusterRole
	err = kubeapi.EachDocument(rbacFile, raw, func(_ int, doc []byte) error {
		var meta metav1.TypeMeta
		if err := yaml.Unmarshal(doc, &meta); err != nil {
			return err
		}
		var err error
		switch meta.Kind {
		case "ServiceAccount":
			o := &corev1.ServiceAccount{}
			w.decode(doc, o)
			_, err = w.kube.CoreV1().ServiceAccounts(o.Namespace).Create(w.ctx, o, metav1.CreateOptions{})
		case "ClusterRole":
			role = &rbacv1.ClusterRole{}
			w.decode(doc, role)
			_, err = w.kube.RbacV1().ClusterRoles().Create(w.ctx, role, metav1.CreateOptions{})
		case "ClusterRoleBinding":
			o := &rbacv1.ClusterRoleBinding{}
			w.decode(doc, o)
			_, err = w.kube.RbacV1().ClusterRoleBindings().Create(w.ctx, o, metav1.CreateOptions{})
		default:
			err = fmt.Errorf("%s: unexpected kind %q", rbacFile, meta.Kind)
		}
		return err
	})
	if err != nil {
		w.t.Fatal(err)
	}
	if role == nil {
		w.t.Fatalf("%s: no ClusterRole", rbacFile)
	}
	w.waitAllowed(role.Rules)
}

func (w *world) decode(doc []byte, into any) {
	w.t.Helper()
	if err := yaml.UnmarshalStrict(doc, into); err != nil {
		w.t.Fatalf("%s: %v", rbacFile, err)
	}
}

// waitAllowed polls SubjectAccessReviews until every grant of rules is
// allowed for the plugin's ServiceAccount.
func (w *world) waitAllowed(rules []rbacv1.PolicyRule) {
	w.t.Helper()
	const user = "system:serviceaccount:kube-system:nqos-cni"
	err := poll.Until(w.ctx, 15*time.Second, 50*time.Millisecond, "RBAC of "+user, func(ctx context.Context) (bool, error) {
		for _, rule := range rules {
			for _, g := range rule.APIGroups {
				for _, res := range rule.Resources {
					for _, v := range rule.Verbs {
						sar := &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{User: user,
							ResourceAttributes: &authorizationv1.ResourceAttributes{Group: g, Resource: res, Verb: v, Namespace: "vms"}}}
						got, err := w.kube.AuthorizationV1().SubjectAccessReviews().Create(ctx, sar, metav1.CreateOptions{})
						if err != nil {
							return false, err
						}
						if !got.Status.Allowed {
							return false, poll.Retry("%s %s/%s not allowed yet", v, g, res)
						}
					}
				}
			}
		}
		return true, nil
	})
	if err != nil {
		w.t.Fatal(err)
	}
}

// createNAD creates a NAD with the config.
func (w *world) createNAD(ns, name, config string) {
	w.t.Helper()
	obj := map[string]any{"apiVersion": nadv1.APIVersion(), "kind": nadv1.Kind,
		"metadata": map[string]any{"namespace": ns, "name": name}, "spec": map[string]any{"config": config}}
	u := &unstructured.Unstructured{Object: obj}
	gvr := schema.GroupVersionResource{Group: nadv1.GroupName, Version: nadv1.Version, Resource: nadv1.Resource}
	if _, err := w.dyn.Resource(gvr).Namespace(ns).Create(w.ctx, u, metav1.CreateOptions{}); err != nil {
		w.t.Fatal(err)
	}
}

// createPod creates a pod in vms with the networks annotation ("" none)
// and returns its UID.
func (w *world) createPod(name, networks string) string {
	w.t.Helper()
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "vms", Name: name},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "registry.k8s.io/pause:3.10.2"}}}}
	if networks != "" {
		p.Annotations = map[string]string{nadv1.NetworksAnnotation: networks}
	}
	got, err := w.kube.CoreV1().Pods("vms").Create(w.ctx, p, metav1.CreateOptions{})
	if err != nil {
		w.t.Fatal(err)
	}
	return string(got.UID)
}

// args are the CNI arguments of sandbox cid of pod vms/name in the pod
// namespace podNS, with a bridge plugin's prevResult.
func (w *world) args(cid, podNS, name, uid string) *skel.CmdArgs {
	prev := `"prevResult":{"cniVersion":"1.0.0","interfaces":[{"name":"eth0","sandbox":"x"}],"ips":[{"address":"10.244.1.5/24","interface":0}]}`
	return &skel.CmdArgs{ContainerID: cid, Netns: netns.Named(podNS).Path(), IfName: "eth0",
		Args:      fmt.Sprintf("IgnoreUnknown=1;K8S_POD_NAMESPACE=vms;K8S_POD_NAME=%s;K8S_POD_UID=%s", name, uid),
		StdinData: []byte("{" + w.conf + "," + prev + "}")}
}

// sandboxPorts lists the OVS interfaces of sandbox cid.
func (w *world) sandboxPorts(cid string) []string {
	w.t.Helper()
	return strings.Fields(w.ovs.Vsctl("--bare", "--columns=name", "find", "Interface", `external_ids:"nqos-cni/sandbox"=`+quote(cid)))
}
