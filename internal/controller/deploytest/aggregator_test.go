package deploytest

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/nqos/nqos/internal/controller"
	"github.com/nqos/nqos/internal/poll"
)

// The built binary in --aggregate-only mode under the aggregator's
// shipped ServiceAccount rules (config/deploy/aggregator.yaml), as the
// Deployment runs it: it holds its Lease, writes status.status from the
// zones' conditions (two nodes, each zone's condition applied as that
// zone's controller applies it), names a zone that reports False, removes
// a deleted node's conditions, and no request of it is denied.
func TestAggregatorUnderShippedRBAC(t *testing.T) {
	srv := the.cluster.get(t)
	bin := the.binary.get(t)
	w := newWorld(t, srv, nil)
	id := newID(t)
	name, lease := "nqos-aggregator-"+id, "nqos-aggregator-"+id
	kubeconfig := bindServiceAccount(t, srv, w, name, readRBACOf(t, "nqos-aggregator", "nqos-aggregator").forLease(lease))
	zones := []string{"zone-a-" + id, "zone-b-" + id}
	for _, n := range zones {
		if _, err := w.kube.CoreV1().Nodes().Create(w.ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: n}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = w.kube.CoreV1().Nodes().Delete(context.Background(), n, metav1.DeleteOptions{}) })
	}
	w.create(fmt.Appendf(nil, "apiVersion: v1\nkind: Namespace\nmetadata: {name: %s}\n", w.ns), w.nqosDoc("gold", 50, "tier: gold", 46))
	startProc(t, bin, name, nil, "--kubeconfig="+kubeconfig, "--aggregate-only", "--loglevel=warn", "--leader-elect",
		"--leader-elect-lease-namespace="+deployNS, "--leader-elect-lease-name="+lease,
		"--leader-elect-lease-duration="+leaseDuration.String(), "--leader-elect-renew-deadline="+renewDeadline.String(),
		"--leader-elect-retry-period="+retryPeriod.String())
	j := &judge{w: w, timeout: 30 * time.Second, denied: func() error { return nil }}
	if check, err := j.wait(checkLease, j.leaseRenewed(deployNS, lease, name)); err != nil {
		t.Fatalf("%s: %v", check, err)
	}
	w.zoneReady(zones[0], "True", "Success", "applied")
	w.zoneReady(zones[1], "False", "Failed", "switch missing")
	w.waitStatus(controller.StatusNotApplied + ": zone " + zones[1] + ": Failed: switch missing")
	w.zoneReady(zones[1], "True", "Success", "applied")
	w.waitStatus(controller.StatusApplied)
	if err := w.kube.CoreV1().Nodes().Delete(w.ctx, zones[1], metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	err := poll.Until(w.ctx, 30*time.Second, 50*time.Millisecond, "the deleted node's condition removed", func(ctx context.Context) (bool, error) {
		conds, _, err := w.conditions(ctx)
		if err != nil {
			return false, err
		}
		if conds[controller.NQOSReadyType(zones[1])] || !conds[controller.NQOSReadyType(zones[0])] {
			return false, poll.Retry("conditions %v", conds)
		}
		return true, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	// Zone A's heartbeat Lease (nqos-zones), renewed once, then left to
	// expire: the aggregate names zone A; renewed again, it is applied.
	hb := w.zoneLease(zones[0], time.Second)
	w.waitStatusFunc("zone "+zones[0]+" named as HeartbeatExpired", func(s string) bool {
		return strings.HasPrefix(s, controller.StatusNotApplied+": zone "+zones[0]+": HeartbeatExpired: no heartbeat from its controller since ")
	})
	w.renewLease(hb)
	w.waitStatus(controller.StatusApplied)
	denied, used, err := auditOf(srv, serviceAccountUser(name))
	if err != nil {
		t.Fatal(err)
	}
	if len(denied) > 0 {
		t.Errorf("denied: %s", strings.Join(denied, ", "))
	}
	for _, g := range []string{"patch k8s.ovn.org/networkqoses/status", "get coordination.k8s.io/leases", "update coordination.k8s.io/leases",
		"watch coordination.k8s.io/leases"} {
		if !used[g] {
			t.Errorf("grant %q never used; used: %v", g, keys(used))
		}
	}
}

// zoneReady applies zone's readiness condition on gold as that zone's
// controller does (server-side apply, field manager nqos-<zone>).
func (w *world) zoneReady(zone, status, reason, msg string) {
	w.t.Helper()
	body := map[string]any{
		"apiVersion": "k8s.ovn.org/v1alpha1", "kind": "NetworkQoS",
		"metadata": map[string]any{"name": "gold", "namespace": w.ns},
		"status": map[string]any{"conditions": []map[string]any{{
			"type": controller.NQOSReadyType(zone), "status": status, "reason": reason, "message": msg,
			"observedGeneration": 1, "lastTransitionTime": time.Now().UTC().Format(time.RFC3339),
		}}},
	}
	raw, err := json.Marshal(body)
	if err != nil {
		w.t.Fatal(err)
	}
	force := true
	_, err = w.dyn.Resource(resourceOf["NetworkQoS"]).Namespace(w.ns).Patch(w.ctx, "gold", types.ApplyPatchType, raw,
		metav1.PatchOptions{FieldManager: "nqos-" + zone, Force: &force}, "status")
	if err != nil {
		w.t.Fatalf("apply zone %s condition: %v", zone, err)
	}
}

// conditions reads gold's condition types and status.status.
func (w *world) conditions(ctx context.Context) (map[string]bool, string, error) {
	u, err := w.dyn.Resource(resourceOf["NetworkQoS"]).Namespace(w.ns).Get(ctx, "gold", metav1.GetOptions{})
	if err != nil {
		return nil, "", err
	}
	var st struct {
		Status     string `json:"status"`
		Conditions []struct {
			Type string `json:"type"`
		} `json:"conditions"`
	}
	raw, err := json.Marshal(u.Object["status"])
	if err != nil {
		return nil, "", err
	}
	if err := json.Unmarshal(raw, &st); err != nil {
		return nil, "", fmt.Errorf("status of gold: %w", err)
	}
	out := map[string]bool{}
	for _, c := range st.Conditions {
		out[c.Type] = true
	}
	return out, st.Status, nil
}

// waitStatus waits until gold's status.status is want.
func (w *world) waitStatus(want string) {
	w.t.Helper()
	w.waitStatusFunc(fmt.Sprintf("%q", want), func(s string) bool { return s == want })
}

// waitStatusFunc waits until gold's status.status satisfies ok.
func (w *world) waitStatusFunc(what string, ok func(string) bool) {
	w.t.Helper()
	err := poll.Until(w.ctx, 30*time.Second, 50*time.Millisecond, "status.status "+what, func(ctx context.Context) (bool, error) {
		_, got, err := w.conditions(ctx)
		if err != nil {
			return false, err
		}
		if !ok(got) {
			return false, poll.Retry("status.status %q", got)
		}
		return true, nil
	})
	if err != nil {
		w.t.Fatal(err)
	}
}

// zoneLease creates zone's heartbeat Lease in nqos-zones as a zone
// controller does (renewed now, lasting d), deleted at test end.
func (w *world) zoneLease(zone string, d time.Duration) *coordinationv1.Lease {
	w.t.Helper()
	ensureNamespace(w.t, w, zonesNS)
	now, secs, holder := metav1.NewMicroTime(time.Now()), int32(d/time.Second), "test"
	l, err := w.kube.CoordinationV1().Leases(zonesNS).Create(w.ctx, &coordinationv1.Lease{
		ObjectMeta: metav1.ObjectMeta{Name: controller.ZoneLeaseName(zone), Labels: map[string]string{controller.ZoneLeaseLabel: zone}},
		Spec:       coordinationv1.LeaseSpec{HolderIdentity: &holder, LeaseDurationSeconds: &secs, AcquireTime: &now, RenewTime: &now},
	}, metav1.CreateOptions{})
	if err != nil {
		w.t.Fatalf("zone %s Lease: %v", zone, err)
	}
	w.t.Cleanup(func() {
		_ = w.kube.CoordinationV1().Leases(zonesNS).Delete(context.Background(), l.Name, metav1.DeleteOptions{})
	})
	return l
}

// renewLease sets l's renewTime to now, with a duration long enough to
// outlast the test.
func (w *world) renewLease(l *coordinationv1.Lease) {
	w.t.Helper()
	cur, err := w.kube.CoordinationV1().Leases(zonesNS).Get(w.ctx, l.Name, metav1.GetOptions{})
	if err != nil {
		w.t.Fatal(err)
	}
	now, secs := metav1.NewMicroTime(time.Now()), int32(3600)
	cur.Spec.RenewTime, cur.Spec.LeaseDurationSeconds = &now, &secs
	if _, err := w.kube.CoordinationV1().Leases(zonesNS).Update(w.ctx, cur, metav1.UpdateOptions{}); err != nil {
		w.t.Fatalf("renew Lease %s: %v", l.Name, err)
	}
}
