package controller

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	nadv1 "github.com/nqos/nqos/api/nad/v1"
	"github.com/nqos/nqos/api/v1alpha1"
	"github.com/nqos/nqos/internal/kubeapi"
	"github.com/nqos/nqos/internal/qos"
)

// nadConfig is the CNI config of a localnet NAD.
type nadConfig struct {
	CNIVersion       string `json:"cniVersion"`
	Name             string `json:"name"`
	Type             string `json:"type"`
	Topology         string `json:"topology"`
	PhysicalNetwork  string `json:"physicalNetworkName"`
	Subnets          string `json:"subnets,omitempty"`
	NetAttachDefName string `json:"netAttachDefName"`
}

// createNAD creates a localnet NAD named name for network net, labelled
// nqos-network=<net>; subnets "" makes it ipamless.
func (e *env) createNAD(name, net, subnets string) {
	e.t.Helper()
	conf, _ := json.Marshal(nadConfig{CNIVersion: "1.0.0", Name: net, Type: "ovn-k8s-cni-overlay", Topology: "localnet",
		PhysicalNetwork: "physnet", Subnets: subnets, NetAttachDefName: e.ns + "/" + name})
	nad := &nadv1.NetworkAttachmentDefinition{
		TypeMeta:   metav1.TypeMeta{APIVersion: nadv1.GroupName + "/" + nadv1.Version, Kind: nadv1.Kind},
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: e.ns, Labels: map[string]string{"nqos-network": net}},
		Spec:       nadv1.Spec{Config: string(conf)},
	}
	e.createUnstructured(nadv1.GroupVersionResource(), nad)
}

func (e *env) createUnstructured(gvr schema.GroupVersionResource, obj any) {
	e.t.Helper()
	if err := e.create(gvr, obj); err != nil {
		e.t.Fatal(err)
	}
}

// create creates a typed custom object through the dynamic client.
func (e *env) create(gvr schema.GroupVersionResource, obj any) error {
	return kubeapi.CreateTyped(e.ctx, e.dyn, gvr, obj)
}

// createPod creates a pod attached to NAD nad (in the test namespace),
// with a pod-networks annotation carrying only a MAC (ipamless).
func (e *env) createPod(name, node, nad string, labels map[string]string) *corev1.Pod {
	e.t.Helper()
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: e.ns, Labels: labels, Annotations: map[string]string{
			nadv1.NetworksAnnotation: nad,
			podNetworksAnnotation:    fmt.Sprintf(`{"%s/%s":{"mac_address":"0a:58:0a:00:00:10","role":"secondary"}}`, e.ns, nad),
		}},
		Spec: corev1.PodSpec{NodeName: node, Containers: []corev1.Container{{Name: "c", Image: "none"}}},
	}
	out, err := e.kube.CoreV1().Pods(e.ns).Create(e.ctx, pod, metav1.CreateOptions{})
	if err != nil {
		e.t.Fatalf("create pod %s: %v", name, err)
	}
	return out
}

func (e *env) lsp(nad, pod string) string { return qos.LogicalPortName(e.ns, nad, e.ns, pod) }

func (e *env) labelPod(name string, labels map[string]string) {
	e.t.Helper()
	l := map[string]any{}
	for k, v := range labels {
		l[k] = v
	}
	e.mergePatch("pod "+name, labelsPatch(l), func(b []byte) error {
		_, err := e.kube.CoreV1().Pods(e.ns).Patch(e.ctx, name, types.MergePatchType, b, metav1.PatchOptions{})
		return err
	})
}

// rule builds an egress rule: dscp, optional ipBlock CIDRs, optional rate.
type ruleSpec struct {
	dscp      int
	cidrs     []string
	except    []string          // ipBlock except of every CIDR
	podSel    map[string]string // destination podSelector (labels)
	tcpPort   int32
	rate      uint32
	burst     uint32
	nsSelDest bool
}

// nqos builds a NetworkQoS selecting NADs labelled nqos-network=<nets...>.
func (e *env) nqos(name string, priority int, podSel map[string]string, nets []string, rules ...ruleSpec) *v1alpha1.NetworkQoS {
	nq := &v1alpha1.NetworkQoS{
		TypeMeta:   metav1.TypeMeta{APIVersion: v1alpha1.GroupName + "/" + v1alpha1.Version, Kind: v1alpha1.Kind},
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: e.ns},
		Spec: v1alpha1.Spec{
			NetworkSelectors: v1alpha1.NetworkSelectors{{
				NetworkSelectionType: v1alpha1.NetworkAttachmentDefinitions,
				NetworkAttachmentDefinitionSelector: &v1alpha1.NetworkAttachmentDefinitionSelector{
					NetworkSelector: metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{
						{Key: "nqos-network", Operator: metav1.LabelSelectorOpIn, Values: nets},
					}},
				},
			}},
			PodSelector: metav1.LabelSelector{MatchLabels: podSel},
			Priority:    priority,
		},
	}
	for _, r := range rules {
		nq.Spec.Egress = append(nq.Spec.Egress, r.rule())
	}
	return nq
}

func (r ruleSpec) rule() v1alpha1.Rule {
	out := v1alpha1.Rule{DSCP: r.dscp}
	if r.rate > 0 {
		out.Bandwidth = &v1alpha1.Bandwidth{Rate: r.rate, Burst: r.burst}
	}
	var cl v1alpha1.Classifier
	for _, c := range r.cidrs {
		cl.To = append(cl.To, v1alpha1.Destination{IPBlock: &v1alpha1.IPBlock{CIDR: c, Except: r.except}})
	}
	if r.podSel != nil {
		cl.To = append(cl.To, v1alpha1.Destination{PodSelector: &metav1.LabelSelector{MatchLabels: r.podSel}})
	}
	if r.tcpPort > 0 {
		p := r.tcpPort
		cl.Ports = append(cl.Ports, &v1alpha1.Port{Protocol: "TCP", Port: &p})
	}
	if len(cl.To) > 0 || len(cl.Ports) > 0 {
		out.Classifier = &cl
	}
	return out
}

func (e *env) createNQ(nq *v1alpha1.NetworkQoS) {
	e.t.Helper()
	e.createUnstructured(v1alpha1.GroupVersionResource(), nq)
}

// updateEgress replaces an object's egress rules.
func (e *env) updateEgress(name string, rules ...ruleSpec) {
	e.t.Helper()
	var egress []v1alpha1.Rule
	for _, r := range rules {
		egress = append(egress, r.rule())
	}
	patch, _ := json.Marshal(map[string]any{"spec": map[string]any{"egress": egress}})
	if _, err := e.dyn.Resource(v1alpha1.GroupVersionResource()).Namespace(e.ns).Patch(e.ctx, name, types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
		e.t.Fatalf("update networkqos %s: %v", name, err)
	}
}

func (e *env) deleteNQ(name string) {
	e.t.Helper()
	if err := e.dyn.Resource(v1alpha1.GroupVersionResource()).Namespace(e.ns).Delete(e.ctx, name, metav1.DeleteOptions{}); err != nil {
		e.t.Fatalf("delete networkqos %s: %v", name, err)
	}
}

func (e *env) deleteAllNetworkQoS() {
	_ = e.dyn.Resource(v1alpha1.GroupVersionResource()).Namespace(e.ns).DeleteCollection(e.ctx, metav1.DeleteOptions{}, metav1.ListOptions{})
}

// getNQ reads an object from the API server (typed).
func (e *env) getNQ(name string) (*v1alpha1.NetworkQoS, error) {
	u, err := e.dyn.Resource(v1alpha1.GroupVersionResource()).Namespace(e.ns).Get(e.ctx, name, metav1.GetOptions{})
	if err != nil {
		return nil, err
	}
	nq := &v1alpha1.NetworkQoS{}
	return nq, runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, nq)
}

// clusterInput reads what the compiler needs from the API server: this
// test's NetworkQoS objects and every namespace, pod and NAD.
func (e *env) clusterInput(node string) qos.Input {
	e.t.Helper()
	in := qos.Input{Node: node}
	nqs, err := e.dyn.Resource(v1alpha1.GroupVersionResource()).Namespace(e.ns).List(e.ctx, metav1.ListOptions{})
	must(e, err)
	for _, u := range nqs.Items {
		nq := &v1alpha1.NetworkQoS{}
		must(e, runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, nq))
		in.NetworkQoSes = append(in.NetworkQoSes, nq)
	}
	nads, err := e.dyn.Resource(nadv1.GroupVersionResource()).List(e.ctx, metav1.ListOptions{})
	must(e, err)
	for _, u := range nads.Items {
		nad := &nadv1.NetworkAttachmentDefinition{}
		must(e, runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, nad))
		in.NADs = append(in.NADs, nad)
	}
	nss, err := e.kube.CoreV1().Namespaces().List(e.ctx, metav1.ListOptions{})
	must(e, err)
	for i := range nss.Items {
		in.Namespaces = append(in.Namespaces, &nss.Items[i])
	}
	pods, err := e.kube.CoreV1().Pods("").List(e.ctx, metav1.ListOptions{})
	must(e, err)
	for i := range pods.Items {
		in.Pods = append(in.Pods, &pods.Items[i])
	}
	return in
}

func must(e *env, err error) {
	e.t.Helper()
	if err != nil {
		e.t.Fatal(err)
	}
}

// waitRowsMatchCompiler waits until the NB holds exactly what qos.Compile
// wants for this namespace's objects.
func (e *env) waitRowsMatchCompiler(node string) qos.Desired {
	e.t.Helper()
	var want qos.Desired
	e.eventually("NB rows equal to the compiler's output", 20*time.Second, func() (bool, string) {
		want = qos.Compile(e.clusterInput(node))
		d := diffRows(e.ownedRows(), want)
		return d == "", d
	})
	return want
}

// cond is an expected condition (status and reason).
type cond struct{ typ, status, reason string }

// waitConditions waits until the object carries every expected condition
// with observedGeneration equal to its generation.
func (e *env) waitConditions(name string, want ...cond) *v1alpha1.NetworkQoS {
	e.t.Helper()
	var nq *v1alpha1.NetworkQoS
	e.eventually("conditions of "+name, 20*time.Second, func() (bool, string) {
		var err error
		if nq, err = e.getNQ(name); err != nil {
			return false, err.Error()
		}
		for _, w := range want {
			c := meta.FindStatusCondition(nq.Status.Conditions, w.typ)
			if c == nil || string(c.Status) != w.status || c.Reason != w.reason || c.ObservedGeneration != nq.Generation {
				return false, fmt.Sprintf("want %+v, have %s", w, describeConditions(nq))
			}
		}
		return true, ""
	})
	return nq
}

func describeConditions(nq *v1alpha1.NetworkQoS) string {
	var parts []string
	for _, c := range nq.Status.Conditions {
		parts = append(parts, fmt.Sprintf("%s=%s/%s(gen %d/%d): %s", c.Type, c.Status, c.Reason, c.ObservedGeneration, nq.Generation, c.Message))
	}
	sort.Strings(parts)
	return strings.Join(parts, "; ")
}

// vm is a pod on the test NAD whose LSP exists before the controller.
type vm struct{ name, node, tier string }

// withVMs creates the VMs' LSPs, starts a controller for ctrlNode, then
// creates the ipamless NAD and the VM pods (label tier).
func (e *env) withVMs(ctrlNode string, vms ...vm) *Controller {
	e.t.Helper()
	for _, v := range vms {
		e.addPorts(e.lsp(nadName, v.name))
	}
	c := e.start(ctrlNode)
	e.createNAD(nadName, e.net, "")
	for _, v := range vms {
		e.createPod(v.name, v.node, nadName, map[string]string{"tier": v.tier})
	}
	return c
}

// goldVM is withVMs with one pod vm1 (tier=gold) and a central controller.
func (e *env) goldVM() *Controller { return e.withVMs("", vm{"vm1", "node-a", "gold"}) }
