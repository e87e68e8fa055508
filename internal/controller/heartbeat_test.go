package controller

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/nqos/nqos/internal/ovnnb/nbtest"
	"github.com/nqos/nqos/internal/poll"
)

// testHeartbeat is the heartbeat Lease duration of the tests (renewed
// every quarter of it).
const testHeartbeat = 2 * time.Second

// Two zone controllers renewing their heartbeat Leases and the
// aggregator reading them, on a real API server: with both zones Ready
// the object is applied; once zone B's controller stops, the aggregate
// names zone B as HeartbeatExpired, since its Lease's last renewal, no
// earlier than 3/4 of the Lease duration after the stop (the last renewal
// was at most a quarter before it) and no later than the duration plus a
// tolerance; a controller started again for zone B renews the Lease and
// the object is applied again.
func TestAggregatorReportsZoneWithExpiredHeartbeat(t *testing.T) {
	e := newEnv(t)
	id := runID(t)
	zoneA, zoneB := "hb-"+id+"-a", "hb-"+id+"-b"
	e.createNode(zoneA)
	e.createNode(zoneB)
	e.startAggregatorWith(AggregatorConfig{HeartbeatNamespace: e.ns})
	e.addPorts(e.lsp(nadName, "vm-a"))
	nbB := nbtest.Start(t)
	nbB.MustNBCtl("ls-add", e.switchName(), "--", "lsp-add", e.switchName(), e.lsp(nadName, "vm-b"))
	e.createNAD(nadName, e.net, "")
	e.createPod("vm-a", zoneA, nadName, map[string]string{"tier": "gold"})
	e.createPod("vm-b", zoneB, nadName, map[string]string{"tier": "gold"})
	e.startZone(e.nb, zoneA)
	ctrlB := e.startZone(nbB, zoneB)
	e.createNQ(e.nqos("gold", 50, map[string]string{"tier": "gold"}, []string{e.net}, ruleSpec{dscp: 46}))
	e.waitAggregate("gold", StatusApplied)
	e.waitLeaseRenewed(zoneB)

	ctrlB.stop(t)
	stopped := time.Now()
	prefix := StatusNotApplied + ": zone " + zoneB + ": " + reasonHeartbeatExpired + ": no heartbeat from its controller since "
	e.waitAggregateFunc("gold", "names zone "+zoneB+" as "+reasonHeartbeatExpired, func(s string) bool {
		return strings.HasPrefix(s, prefix) && !strings.Contains(s, zoneA)
	})
	took := time.Since(stopped)
	t.Logf("zone %s stopped -> aggregate names its expired heartbeat after %v (Lease %v)", zoneB, took.Round(time.Millisecond), testHeartbeat)
	if lo, hi := testHeartbeat*3/4, testHeartbeat+3*time.Second; took < lo || took > hi {
		t.Errorf("expired heartbeat reported %v after the stop, want within [%v, %v]", took, lo, hi)
	}
	nq, err := e.getNQ("gold")
	must(e, err)
	since, err := time.Parse(time.RFC3339, strings.TrimPrefix(nq.Status.Status, prefix))
	if err != nil || since.After(stopped) || stopped.Sub(since) > testHeartbeat/4+time.Second {
		t.Errorf("status %q: since %v (%v), want the last renewal, within a quarter Lease before the stop at %v", nq.Status.Status, since, err, stopped)
	}

	restarted := time.Now()
	e.startZone(nbB, zoneB)
	e.waitAggregate("gold", StatusApplied)
	t.Logf("zone %s controller started again -> aggregate applied after %v", zoneB, time.Since(restarted).Round(time.Millisecond))
}

// startZone runs a zone controller for node on srv with a heartbeat
// Lease in the test namespace; it returns once the controller is ready.
func (e *env) startZone(srv *nbtest.Server, node string) *running {
	e.t.Helper()
	nbc := e.dialTo(srv)
	r := e.launchWith(Config{NB: nbc, Node: node, HeartbeatNamespace: e.ns, HeartbeatDuration: testHeartbeat}, nbc.Close)
	e.eventually("zone "+node+" ready", 30*time.Second, func() (bool, string) {
		if err := r.c.NotReady(); err != nil {
			return false, err.Error()
		}
		return true, ""
	})
	return r
}

// waitLeaseRenewed waits until zone's heartbeat Lease was renewed after
// it was acquired, carrying the zone label and the test duration.
func (e *env) waitLeaseRenewed(zone string) {
	e.t.Helper()
	err := poll.Until(e.ctx, 10*time.Second, 0, "heartbeat Lease of zone "+zone+" renewed", func(ctx context.Context) (bool, error) {
		l, err := e.kube.CoordinationV1().Leases(e.ns).Get(ctx, ZoneLeaseName(zone), metav1.GetOptions{})
		if err != nil {
			return false, poll.Retry("%v", err)
		}
		s := l.Spec
		if l.Labels[ZoneLeaseLabel] != zone || s.LeaseDurationSeconds == nil || *s.LeaseDurationSeconds != int32(testHeartbeat/time.Second) {
			return false, poll.Retry("lease labels %v, duration %v", l.Labels, s.LeaseDurationSeconds)
		}
		if s.AcquireTime == nil || s.RenewTime == nil || !s.RenewTime.After(s.AcquireTime.Time) {
			return false, poll.Retry("not renewed since acquired")
		}
		return true, nil
	})
	if err != nil {
		e.t.Fatal(err)
	}
}

// startAggregatorWith runs an Aggregator configured as cfg (its Kube and
// Log set here) until the test ends; it returns once it is ready.
func (e *env) startAggregatorWith(cfg AggregatorConfig) *Aggregator {
	e.t.Helper()
	cfg.Kube = e.cfg
	cfg.Log = slog.New(slog.NewTextHandler(testWriter{e.t}, &slog.HandlerOptions{Level: slog.LevelWarn}))
	return e.runAggregator(cfg)
}

// A zone controller whose heartbeat Lease cannot be written (its
// namespace does not exist yet) is ready until no renewal succeeded for
// the Lease's duration, then not ready naming the Lease and the API
// server's error, no earlier than the duration after it started and no
// later than the duration plus a tolerance; once the namespace exists the
// next renewal succeeds and the controller is ready again.
func TestZoneNotReadyWhileHeartbeatFails(t *testing.T) {
	e := newEnv(t)
	zone := "hb-" + runID(t) + "-c"
	hbNS := "hbns-" + runID(t)
	e.createNode(zone)
	nbc := e.dialTo(e.nb)
	started := time.Now()
	r := e.launchWith(Config{NB: nbc, Node: zone, HeartbeatNamespace: hbNS, HeartbeatDuration: testHeartbeat}, nbc.Close)
	e.eventually("zone "+zone+" ready before its heartbeat expired", testHeartbeat/2, func() (bool, string) {
		if err := r.c.NotReady(); err != nil {
			return false, err.Error()
		}
		return true, ""
	})
	want := "zone heartbeat Lease " + ZoneLeaseName(zone) + " not renewed for "
	var reason string
	e.eventually("zone "+zone+" not ready naming its Lease", testHeartbeat+3*time.Second, func() (bool, string) {
		err := r.c.NotReady()
		if err == nil || !strings.Contains(err.Error(), want) {
			return false, fmt.Sprint(err)
		}
		reason = err.Error()
		return true, ""
	})
	took := time.Since(started)
	t.Logf("heartbeat failing since start -> not ready after %v: %s", took.Round(time.Millisecond), reason)
	if took < testHeartbeat {
		t.Errorf("not ready %v after start, before the Lease duration %v", took, testHeartbeat)
	}
	if !strings.Contains(reason, hbNS) || !strings.Contains(reason, reasonHeartbeatExpired) {
		t.Errorf("reason %q names neither the API server's error about namespace %s nor %s", reason, hbNS, reasonHeartbeatExpired)
	}
	if _, err := e.kube.CoreV1().Namespaces().Create(e.ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: hbNS}}, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create namespace %s: %v", hbNS, err)
	}
	e.eventually("zone "+zone+" ready again once its Lease is renewed", testHeartbeat/4+3*time.Second, func() (bool, string) {
		if err := r.c.NotReady(); err != nil {
			return false, err.Error()
		}
		return true, ""
	})
	l, err := e.kube.CoordinationV1().Leases(hbNS).Get(e.ctx, ZoneLeaseName(zone), metav1.GetOptions{})
	if err != nil || l.Spec.RenewTime == nil {
		t.Fatalf("Lease %s/%s after recovery: %v", hbNS, ZoneLeaseName(zone), err)
	}
}
