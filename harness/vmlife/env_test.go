package vmlife

import (
	"context"
	"encoding/json"
	"log/slog"
	"slices"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"

	"github.com/nqos/nqos/api/v1alpha1"
	"github.com/nqos/nqos/internal/controller"
	"github.com/nqos/nqos/internal/kubeapi"
	"github.com/nqos/nqos/internal/ovnnb"
	"github.com/nqos/nqos/kubevirt"
	"github.com/nqos/nqos/topo/localnet"
)

// Test world: the OKEP example network vms/tenant-blue (VLAN 100), its
// default hosts, and two classes.
const (
	vmNamespace = "vms"
	networkVLAN = 100
	peerHost    = "backup"
	prodDSCP    = 46
	batchDSCP   = 10
	batchKbps   = 5000
	batchKbits  = 1000
)

var (
	prodObj  = ObjectRef{vmNamespace, "production"}
	batchObj = ObjectRef{vmNamespace, "batch"}
)

// env is a real testbed with the Kubernetes API, the controller running
// in-process against the testbed's NB, the VM manager and the operations.
type env struct {
	t   *testing.T
	ctx context.Context
	tb  *localnet.Testbed
	dyn dynamic.Interface
	nb  *ovnnb.Client // the harness's own NB view
	vms *kubevirt.Manager
	ops *Ops
}

// boot starts everything for one test under runID; t.Cleanup stops the
// controller and removes the testbed even when the test fails.
func boot(t *testing.T, runID string) *env {
	t.Helper()
	if testing.Short() {
		t.Skip("real testbed test: skipped with -short")
	}
	if _, err := kubeapi.BinDir(); err != nil {
		t.Skipf("needs kube-apiserver and etcd: %v", err)
	}
	tb := localnet.StartTB(t, localnet.Spec{RunID: runID, WithKube: true})
	e := &env{t: t, ctx: context.Background(), tb: tb}
	cfg := tb.RESTConfig()
	kube, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if e.dyn, err = dynamic.NewForConfig(cfg); err != nil {
		t.Fatal(err)
	}
	e.nb = e.dial()
	e.startController()
	e.vms = kubevirt.NewManager(tb, kube)
	e.ops = New(tb, e.vms, e.nb)
	return e
}

func (e *env) dial() *ovnnb.Client {
	e.t.Helper()
	c, err := ovnnb.Dial(e.ctx, e.tb.NBAddress(), slog.New(slog.DiscardHandler))
	if err != nil {
		e.t.Fatalf("dial NB %s: %v", e.tb.NBAddress(), err)
	}
	e.t.Cleanup(c.Close)
	return c
}

// startController runs the controller with its own NB connection until
// the test ends.
func (e *env) startController() {
	e.t.Helper()
	log := slog.New(slog.NewTextHandler(testWriter{e.t}, &slog.HandlerOptions{Level: slog.LevelWarn}))
	c, err := controller.New(controller.Config{Kube: e.tb.RESTConfig(), NB: e.dial(), Log: log})
	if err != nil {
		e.t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(e.ctx)
	done := make(chan error, 1)
	go func() { done <- c.Run(ctx) }()
	e.t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			e.t.Errorf("controller: %v", err)
		}
	})
	err = localnet.Poll(e.ctx, 60*time.Second, "controller synced", func(context.Context) (bool, error) {
		select {
		case err := <-done:
			done <- err
			return false, err
		default:
			return c.Ready(), nil
		}
	})
	if err != nil {
		e.t.Fatal(err)
	}
}

// testWriter sends controller logs to the test log.
type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Logf("%s", strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

var gvrNQ = schema.GroupVersionResource{Group: v1alpha1.GroupName, Version: v1alpha1.Version, Resource: v1alpha1.Resource}

// createNQ creates a NetworkQoS on tenant-blue selecting pods with
// tier=<tier>, marking every egress packet with dscp and, with kbps > 0,
// policing it; it waits until the object's port group is in the NB.
func (e *env) createNQ(obj ObjectRef, tier string, priority, dscp int, kbps, kbits uint32) {
	e.t.Helper()
	rule := v1alpha1.Rule{DSCP: dscp}
	if kbps > 0 {
		rule.Bandwidth = &v1alpha1.Bandwidth{Rate: kbps, Burst: kbits}
	}
	nq := &v1alpha1.NetworkQoS{
		TypeMeta:   metav1.TypeMeta{APIVersion: v1alpha1.GroupName + "/" + v1alpha1.Version, Kind: v1alpha1.Kind},
		ObjectMeta: metav1.ObjectMeta{Name: obj.Name, Namespace: obj.Namespace},
		Spec: v1alpha1.Spec{
			NetworkSelectors: v1alpha1.NetworkSelectors{{
				NetworkSelectionType: v1alpha1.NetworkAttachmentDefinitions,
				NetworkAttachmentDefinitionSelector: &v1alpha1.NetworkAttachmentDefinitionSelector{
					NetworkSelector: metav1.LabelSelector{MatchLabels: map[string]string{"nqos-network": "tenant-blue"}},
				},
			}},
			PodSelector: metav1.LabelSelector{MatchLabels: map[string]string{"tier": tier}},
			Priority:    priority,
			Egress:      []v1alpha1.Rule{rule},
		},
	}
	raw, err := runtime.DefaultUnstructuredConverter.ToUnstructured(nq)
	if err != nil {
		e.t.Fatal(err)
	}
	if _, err := e.dyn.Resource(gvrNQ).Namespace(obj.Namespace).Create(e.ctx, &unstructured.Unstructured{Object: raw}, metav1.CreateOptions{}); err != nil {
		e.t.Fatalf("create NetworkQoS %s: %v", obj, err)
	}
	e.t.Cleanup(func() {
		_ = e.dyn.Resource(gvrNQ).Namespace(obj.Namespace).Delete(context.Background(), obj.Name, metav1.DeleteOptions{})
	})
	err = localnet.Poll(e.ctx, 20*time.Second, "port group of NetworkQoS "+obj.String(), func(context.Context) (bool, error) {
		rows, err := e.nb.Rows(e.ctx)
		if err != nil {
			return false, err
		}
		for _, pg := range rows.PortGroups {
			if pg.ExternalIDs["k8s.ovn.org/name"] == obj.Namespace+":"+obj.Name {
				return true, nil
			}
		}
		return false, nil
	})
	if err != nil {
		e.t.Fatal(err)
	}
}

// vm declares a one-NIC VM on tenant-blue.
func vm(name, node, mac, ipv4, tier string) kubevirt.VM {
	return kubevirt.VM{Name: name, Namespace: vmNamespace, Labels: map[string]string{"tier": tier}, Node: node,
		Interfaces: []kubevirt.Interface{{NAD: "tenant-blue", MAC: mac, IPv4: ipv4}}}
}

func (e *env) createVM(v kubevirt.VM) VMRef {
	e.t.Helper()
	if err := e.vms.Create(e.ctx, v, kubevirt.CreateOptions{}); err != nil {
		e.t.Fatal(err)
	}
	return VMRef{v.Namespace, v.Name}
}

// waitMembers waits until the object's port group holds exactly want.
func (e *env) waitMembers(obj ObjectRef, want ...string) {
	e.t.Helper()
	if got := waitMembersOf(e, obj, want...); got != nil {
		e.t.Fatalf("port group of %s: %v, want %v", obj, got, want)
	}
}

// waitMembersOf waits until the object's port group holds exactly want
// and returns nil, or the members it holds at the deadline.
func waitMembersOf(e *env, obj ObjectRef, want ...string) []string {
	slices.Sort(want)
	var got []string
	err := localnet.Poll(e.ctx, 10*time.Second, "members of "+obj.String(), func(ctx context.Context) (bool, error) {
		var err error
		got, err = e.ops.Members(ctx, obj)
		return slices.Equal(got, want), err
	})
	if err != nil {
		return append([]string{"error: " + err.Error()}, got...)
	}
	return nil
}

func (e *env) lsp(ref VMRef) string {
	e.t.Helper()
	in, err := e.vms.Get(ref.Namespace, ref.Name)
	if err != nil {
		e.t.Fatal(err)
	}
	return in.LSPs[0]
}

// logJSON logs a result as JSON for the report.
func logJSON(t *testing.T, what string, v any) {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%s: %s", what, b)
}
