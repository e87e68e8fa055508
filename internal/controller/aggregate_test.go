package controller

import (
	"context"
	"fmt"
	"log/slog"
	"sort"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/nqos/nqos/api/v1alpha1"
	"github.com/nqos/nqos/internal/ovnnb/nbtest"
	"github.com/nqos/nqos/internal/qos"
)

func TestAggregateOf(t *testing.T) {
	ready := func(zone string, status metav1.ConditionStatus, gen int64) metav1.Condition {
		return metav1.Condition{Type: NQOSReadyType(zone), Status: status, Reason: "R", Message: "m " + zone, ObservedGeneration: gen}
	}
	accepted := metav1.Condition{Type: qos.ConditionAccepted, Status: metav1.ConditionTrue, ObservedGeneration: 2}
	for _, tc := range []struct {
		name      string
		conds     []metav1.Condition
		zones     []string
		want      string
		wantStale []string
		expired   map[string]time.Time
	}{
		{"every zone ready", []metav1.Condition{accepted, ready("a", "True", 2), ready("b", "True", 2)}, []string{"a", "b"}, StatusApplied, nil, nil},
		{"one zone failed is named", []metav1.Condition{ready("a", "True", 2), ready("b", "False", 2)}, []string{"a", "b"},
			StatusNotApplied + ": zone b: R: m b", nil, nil},
		{"failure wins over pending", []metav1.Condition{ready("b", "False", 2)}, []string{"a", "b"}, StatusNotApplied + ": zone b: R: m b", nil, nil},
		{"zone without a condition is pending", []metav1.Condition{ready("a", "True", 2)}, []string{"a", "b"}, statusPendingPrefix + " in zones b", nil, nil},
		{"older generation is pending", []metav1.Condition{ready("a", "True", 1), ready("b", "True", 2)}, []string{"a", "b"}, statusPendingPrefix + " in zones a", nil, nil},
		{"unknown is pending", []metav1.Condition{ready("a", "Unknown", 2)}, []string{"a"}, statusPendingPrefix + " in zones a", nil, nil},
		{"vanished zone is stale and ignored", []metav1.Condition{ready("a", "True", 2), ready("gone", "False", 2), ready("global", "True", 2)},
			[]string{"a"}, StatusApplied, []string{"global", "gone"}, nil},
		{"no nodes", nil, nil, statusPendingPrefix + ": no nodes", nil, nil},
		{"expired heartbeat fails a ready zone, naming since when", []metav1.Condition{ready("a", "True", 2), ready("b", "True", 2)},
			[]string{"a", "b"}, StatusNotApplied + ": zone b: HeartbeatExpired: no heartbeat from its controller since 2026-12-03T18:00:00Z", nil,
			map[string]time.Time{"b": time.Date(2026, 12, 3, 18, 0, 0, 0, time.UTC), "gone": time.Date(2026, 12, 3, 17, 0, 0, 0, time.UTC)}},
		{"expired heartbeat of a pending zone", []metav1.Condition{ready("a", "True", 2)},
			[]string{"a", "b"}, StatusNotApplied + ": zone b: HeartbeatExpired: its controller never renewed its heartbeat Lease", nil,
			map[string]time.Time{"b": {}}},
		{"ovnkube's type read when nqos's is absent", []metav1.Condition{{Type: OVNKReadyType("a"), Status: "False", Reason: "R", Message: "m a", ObservedGeneration: 2},
			ready("b", "True", 2), {Type: OVNKReadyType("b"), Status: "False", ObservedGeneration: 2}}, []string{"a", "b"},
			StatusNotApplied + ": zone a: R: m a", nil, nil},
		{"many failed zones are counted", []metav1.Condition{ready("1", "False", 2), ready("2", "False", 2), ready("3", "False", 2),
			ready("4", "False", 2), ready("5", "False", 2), ready("6", "False", 2), ready("7", "False", 2)},
			[]string{"1", "2", "3", "4", "5", "6", "7"},
			StatusNotApplied + ": zone 1: R: m 1; zone 2: R: m 2; zone 3: R: m 3; zone 4: R: m 4; zone 5: R: m 5; and 2 more zones", nil, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			nq := &v1alpha1.NetworkQoS{ObjectMeta: metav1.ObjectMeta{Generation: 2}}
			nq.Status.Conditions = tc.conds
			v := aggregateOf(nq, tc.zones, tc.expired)
			if v.status != tc.want {
				t.Errorf("status = %q, want %q", v.status, tc.want)
			}
			if fmt.Sprint(v.stale) != fmt.Sprint(tc.wantStale) {
				t.Errorf("stale = %v, want %v", v.stale, tc.wantStale)
			}
		})
	}
}

// Two zone controllers (one NB each) and the aggregator on a real API
// server: a zone whose apply fails (its NB lacks the switch) is named in
// status.status; once it applies, the object is applied; a node without
// a report is named as pending; a deleted node's conditions are removed
// (the Accepted condition the other zone also writes stays).
func TestAggregatorNamesFailedZoneAndRemovesVanished(t *testing.T) {
	e := newEnv(t)
	id := runID(t)
	zoneA, zoneB, zoneC := "agg-"+id+"-a", "agg-"+id+"-b", "agg-"+id+"-c"
	e.createNode(zoneA)
	e.createNode(zoneB)
	e.startAggregator()
	e.withVMs(zoneA, vm{"vm-a", zoneA, "gold"}, vm{"vm-b", zoneB, "gold"})
	nbB := nbtest.Start(t) // no switch yet: zone B's apply fails
	ctrlB := e.startOn(nbB, zoneB)
	e.createNQ(e.nqos("gold", 50, map[string]string{"tier": "gold"}, []string{e.net}, ruleSpec{dscp: 46}))

	e.waitAggregateFunc("gold", "names failed zone "+zoneB, func(s string) bool {
		return strings.HasPrefix(s, StatusNotApplied+": zone "+zoneB+": "+reasonFailed+": ") && !strings.Contains(s, zoneA)
	})
	nbB.MustNBCtl("ls-add", e.switchName(), "--", "lsp-add", e.switchName(), e.lsp(nadName, "vm-b"))
	e.waitAggregate("gold", StatusApplied)
	if !e.ownsStatusField("gold", AggregateFieldManager) {
		t.Errorf("%s does not own status.status", AggregateFieldManager)
	}

	e.createNode(zoneC) // no controller there
	e.waitAggregate("gold", statusPendingPrefix+" in zones "+zoneC)
	e.deleteNode(zoneC)
	e.waitAggregate("gold", StatusApplied)

	ctrlB.stop(t)
	e.deleteNode(zoneB)
	e.eventually("zone B's condition removed", 20*time.Second, func() (bool, string) {
		nq, err := e.getNQ("gold")
		if err != nil {
			return false, err.Error()
		}
		has := func(typ string) bool { return meta.FindStatusCondition(nq.Status.Conditions, typ) != nil }
		gone := !has(NQOSReadyType(zoneB)) && !has(OVNKReadyType(zoneB))
		kept := has(ConditionAccepted) && (has(NQOSReadyType(zoneA)) || has(OVNKReadyType(zoneA)))
		return gone && kept && nq.Status.Status == StatusApplied, describeConditions(nq) + " status " + nq.Status.Status
	})
}

// startAggregator runs an Aggregator until the test ends; it returns once
// the aggregator is ready.
func (e *env) startAggregator() *Aggregator {
	e.t.Helper()
	return e.runAggregator(AggregatorConfig{Kube: e.cfg,
		Log: slog.New(slog.NewTextHandler(testWriter{e.t}, &slog.HandlerOptions{Level: slog.LevelWarn}))})
}

// runAggregator runs an Aggregator configured as cfg until the test
// ends; it returns once the aggregator is ready.
func (e *env) runAggregator(cfg AggregatorConfig) *Aggregator {
	e.t.Helper()
	a, err := NewAggregator(cfg)
	if err != nil {
		e.t.Fatalf("NewAggregator: %v", err)
	}
	ctx, cancel := context.WithCancel(e.ctx)
	done := make(chan error, 1)
	go func() { done <- a.Run(ctx) }()
	e.t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			e.t.Errorf("aggregator Run: %v", err)
		}
	})
	e.eventually("aggregator ready", 30*time.Second, func() (bool, string) {
		if err := a.NotReady(); err != nil {
			return false, err.Error()
		}
		return true, ""
	})
	return a
}

// createNode creates a Node, deleted at test end.
func (e *env) createNode(name string) {
	e.t.Helper()
	_, err := e.kube.CoreV1().Nodes().Create(e.ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{})
	must(e, err)
	e.t.Cleanup(func() { _ = e.kube.CoreV1().Nodes().Delete(context.Background(), name, metav1.DeleteOptions{}) })
}

func (e *env) deleteNode(name string) {
	e.t.Helper()
	must(e, e.kube.CoreV1().Nodes().Delete(e.ctx, name, metav1.DeleteOptions{}))
}

// waitAggregateFunc waits until status.status of name satisfies ok.
func (e *env) waitAggregateFunc(name, what string, ok func(string) bool) {
	e.t.Helper()
	e.eventually(fmt.Sprintf("status.status of %s %s", name, what), 20*time.Second, func() (bool, string) {
		nq, err := e.getNQ(name)
		if err != nil {
			return false, err.Error()
		}
		return ok(nq.Status.Status), fmt.Sprintf("status.status %q", nq.Status.Status)
	})
}

// A zone controller holds its own node's pods in full and the other
// nodes' pods cut down to what destinations need: its port group holds
// only its node's port, while the destination address set on an IPAM
// network holds the selected pods of every node, and follows a remote
// pod's address change.
func TestZoneControllerWatchesOwnNodesPodsInFull(t *testing.T) {
	e := newEnv(t)
	const nad = "ipam"
	e.addPorts(e.lsp(nad, "src"))
	c := e.start("node-a")
	e.createNAD(nad, e.net, "10.50.0.0/16")
	e.createIPAMPod("src", "node-a", nad, map[string]string{"tier": "gold"}, "10.50.0.10")
	e.createIPAMPod("db-a", "node-a", nad, map[string]string{"app": "db"}, "10.50.0.21")
	e.createIPAMPod("db-b", "node-b", nad, map[string]string{"app": "db"}, "10.50.0.22")
	e.createNQ(e.nqos("gold", 50, map[string]string{"tier": "gold"}, []string{e.net}, ruleSpec{dscp: 46, podSel: map[string]string{"app": "db"}}))
	want := e.waitRowsMatchCompiler("node-a")
	if len(want.AddressSets) == 0 || len(want.PortGroups) != 1 || len(want.PortGroups[0].Ports) != 1 {
		t.Fatalf("compiled rows %+v: want one port group with one port and address sets", want)
	}
	if got := fmt.Sprint(want.AddressSets[0].Addresses); !strings.Contains(got, "10.50.0.22") {
		t.Errorf("address set %s lacks the remote pod's address 10.50.0.22", got)
	}
	if keys := c.inf.pods.GetIndexer().ListKeys(); fmt.Sprint(sorted(keys)) != fmt.Sprint([]string{e.ns + "/db-a", e.ns + "/src"}) {
		t.Errorf("own-node pod cache = %v, want node-a's pods only", sorted(keys))
	}
	obj, ok, err := c.inf.remote.indexer().GetByKey(e.ns + "/db-b")
	if err != nil || !ok {
		t.Fatalf("remote pod cache lacks db-b: %v", err)
	}
	if p := obj.(*corev1.Pod); len(p.Spec.Containers) != 0 || len(p.Annotations) != 1 || p.Labels["app"] != "db" {
		t.Errorf("remote pod kept %d containers, annotations %v, labels %v: want none, pod-networks only, its labels",
			len(p.Spec.Containers), p.Annotations, p.Labels)
	}
	e.setIPAMAddress("db-b", nad, "10.50.0.23")
	e.waitRowsMatchCompiler("node-a")
}

// createIPAMPod creates a pod on NAD nad with address ip in its
// pod-networks annotation.
func (e *env) createIPAMPod(name, node, nad string, labels map[string]string, ip string) {
	e.t.Helper()
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: e.ns, Labels: labels, Annotations: map[string]string{
			"k8s.v1.cni.cncf.io/networks": nad,
			podNetworksAnnotation:         ipamNetworks(e.ns, nad, ip),
		}},
		Spec: corev1.PodSpec{NodeName: node, Containers: []corev1.Container{{Name: "c", Image: "none"}}},
	}
	_, err := e.kube.CoreV1().Pods(e.ns).Create(e.ctx, pod, metav1.CreateOptions{})
	must(e, err)
}

func (e *env) setIPAMAddress(name, nad, ip string) {
	e.t.Helper()
	patch := fmt.Sprintf(`{"metadata":{"annotations":{%q:%q}}}`, podNetworksAnnotation, ipamNetworks(e.ns, nad, ip))
	_, err := e.kube.CoreV1().Pods(e.ns).Patch(e.ctx, name, types.MergePatchType, []byte(patch), metav1.PatchOptions{})
	must(e, err)
}

func ipamNetworks(ns, nad, ip string) string {
	return fmt.Sprintf(`{"%s/%s":{"ip_addresses":["%s/16"],"mac_address":"0a:58:0a:00:00:10","role":"secondary"}}`, ns, nad, ip)
}

func sorted(s []string) []string {
	out := append([]string(nil), s...)
	sort.Strings(out)
	return out
}
