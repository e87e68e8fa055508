package deploytest

import (
	"context"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/nqos/nqos/internal/controller"
)

// A zone controller (the built binary with --node, as the DaemonSet runs
// it) under the controller's shipped rules creates and renews its zone's
// heartbeat Lease in nqos-zones, and none of its requests is denied;
// without any one of the zone-heartbeat Role's grants the Lease is never
// renewed.
func TestZoneHeartbeatUnderShippedRBAC(t *testing.T) {
	srv := the.cluster.get(t)
	requireOVN(t)
	rules := readRBAC(t)
	if len(rules.zone) == 0 {
		t.Fatal("config/deploy: no Role nqos-controller-zone-heartbeat in nqos-zones")
	}
	run := func(t *testing.T, r shippedRBAC, timeout time.Duration) ([]string, error) {
		nb := startNB(t)
		w := newWorld(t, srv, nb)
		id := newID(t)
		name, node := "nqos-zone-"+id, "node-"+id
		kubeconfig := bindServiceAccount(t, srv, w, name, r)
		t.Cleanup(func() {
			_ = w.kube.CoordinationV1().Leases(zonesNS).Delete(context.Background(), controller.ZoneLeaseName(node), metav1.DeleteOptions{})
		})
		startProc(t, the.binary.get(t), name, nil, controllerFlags(kubeconfig, nb.Addr(), "--node="+node, "--zone-heartbeat-duration=2s")...)
		j := &judge{w: w, timeout: timeout, denied: func() error { return nil }}
		_, err := j.wait(checkLease, j.leaseRenewed(zonesNS, controller.ZoneLeaseName(node), name))
		denied, _, aerr := auditOf(srv, serviceAccountUser(name))
		if aerr != nil {
			t.Fatal(aerr)
		}
		return denied, err
	}
	t.Run("shipped", func(t *testing.T) {
		denied, err := run(t, rules, 20*time.Second)
		if err != nil || len(denied) > 0 {
			t.Fatalf("zone Lease: %v; denied: %s", err, strings.Join(denied, ", "))
		}
	})
	for _, g := range rules.grants() {
		if !g.zone {
			continue
		}
		t.Run("without "+g.String(), func(t *testing.T) {
			if _, err := run(t, rules.without(g), 6*time.Second); err == nil {
				t.Fatalf("removing %q: the zone Lease is still renewed: the grant is not needed", g)
			}
		})
	}
}
