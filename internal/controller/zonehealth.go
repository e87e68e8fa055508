package controller

import (
	"context"
	"maps"
	"slices"
	"sync"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
)

// zoneHeartbeats is the aggregator's view of the zones' heartbeat Leases:
// a zone whose Lease it has not seen renewed for the Lease's duration is
// stale. Expiry is judged on the aggregator's own clock from when it saw
// each renewal (as the node lifecycle controller judges node leases), so
// a skewed zone clock neither hides nor fakes an expiry; a Lease already
// there when the aggregator starts gets a full duration. The time named
// as "since" is the Lease's own renewTime. A zone with no Lease (an
// nqos-controller without a heartbeat) is judged by its conditions only.
type zoneHeartbeats struct {
	kick chan struct{} // a Lease changed: judge again

	mu    sync.Mutex
	beats map[string]beat      // by zone
	stale map[string]time.Time // the last judgement: zone -> last renewTime
}

// beat is one zone's last seen renewal.
type beat struct {
	renew    time.Time     // the Lease's renewTime (the zone's clock)
	seen     time.Time     // when this aggregator saw that renewal
	duration time.Duration // the Lease's leaseDurationSeconds
}

func newZoneHeartbeats() *zoneHeartbeats {
	return &zoneHeartbeats{kick: make(chan struct{}, 1), beats: map[string]beat{}, stale: map[string]time.Time{}}
}

// leaseInformer watches the zone Leases (those labelled ZoneLeaseLabel)
// of namespace.
func leaseInformer(kube kubernetes.Interface, namespace string) cache.SharedIndexInformer {
	f := informers.NewSharedInformerFactoryWithOptions(listThenWatch{kube}, 0, informers.WithNamespace(namespace),
		informers.WithTweakListOptions(func(o *metav1.ListOptions) { o.LabelSelector = ZoneLeaseLabel }))
	return f.Coordination().V1().Leases().Informer()
}

// handler follows the Leases into h.
func (h *zoneHeartbeats) handler() cache.ResourceEventHandler {
	return cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { h.observe(obj, false) },
		UpdateFunc: func(_, obj any) { h.observe(obj, false) },
		DeleteFunc: func(obj any) { h.observe(obj, true) },
	}
}

func (h *zoneHeartbeats) observe(obj any, gone bool) {
	if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = t.Obj
	}
	l, ok := obj.(*coordinationv1.Lease)
	if !ok {
		return
	}
	zone := l.Labels[ZoneLeaseLabel]
	if zone == "" {
		return
	}
	h.mu.Lock()
	if gone {
		delete(h.beats, zone)
	} else {
		var renew time.Time
		if l.Spec.RenewTime != nil {
			renew = l.Spec.RenewTime.Time
		}
		d := DefaultHeartbeatDuration
		if l.Spec.LeaseDurationSeconds != nil && *l.Spec.LeaseDurationSeconds > 0 {
			d = time.Duration(*l.Spec.LeaseDurationSeconds) * time.Second
		}
		b, known := h.beats[zone]
		if !known || !b.renew.Equal(renew) {
			b.seen = time.Now()
		}
		b.renew, b.duration = renew, d
		h.beats[zone] = b
	}
	h.mu.Unlock()
	select {
	case h.kick <- struct{}{}:
	default:
	}
}

// judge recomputes the stale zones at now; it returns whether they
// changed and when the next fresh Lease expires (zero: none will).
func (h *zoneHeartbeats) judge(now time.Time) (changed bool, next time.Time) {
	h.mu.Lock()
	defer h.mu.Unlock()
	stale := map[string]time.Time{}
	for zone, b := range h.beats {
		expiry := b.seen.Add(b.duration)
		if !now.Before(expiry) {
			stale[zone] = b.renew
			continue
		}
		if next.IsZero() || expiry.Before(next) {
			next = expiry
		}
	}
	changed = !maps.EqualFunc(stale, h.stale, time.Time.Equal)
	h.stale = stale
	return changed, next
}

// staleZones is the last judgement: zone -> the Lease's last renewTime.
func (h *zoneHeartbeats) staleZones() map[string]time.Time {
	h.mu.Lock()
	defer h.mu.Unlock()
	return maps.Clone(h.stale)
}

// watch judges the Leases whenever one changes or the next one expires,
// until ctx ends, calling changed (with the stale zones, sorted) each
// time the stale zones change.
func (h *zoneHeartbeats) watch(ctx context.Context, changed func(stale []string)) {
	for {
		ch, next := h.judge(time.Now())
		if ch {
			changed(slices.Sorted(maps.Keys(h.staleZones())))
		}
		var expire <-chan time.Time
		var t *time.Timer
		if !next.IsZero() {
			t = time.NewTimer(time.Until(next))
			expire = t.C
		}
		select {
		case <-ctx.Done():
		case <-h.kick:
		case <-expire:
		}
		if t != nil {
			t.Stop()
		}
		if ctx.Err() != nil {
			return
		}
	}
}
