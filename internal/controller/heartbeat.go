package controller

import (
	"context"
	"fmt"
	"log/slog"
	"math"
	"sync"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// A zone controller's heartbeat is a coordination.k8s.io Lease per zone,
// as the kubelet's node lease: named ZoneLeaseName(zone), labelled
// ZoneLeaseLabel=<zone>, in the heartbeat namespace, its renewTime set
// every quarter of its leaseDurationSeconds while the controller runs.
// The Aggregator reports a zone whose Lease it has not seen renewed for
// that duration as not ready. The Lease is left in place when the
// controller stops: a stopped zone is no more reconciling than a dead one.
const (
	// ZoneLeaseLabel carries the zone on its heartbeat Lease.
	ZoneLeaseLabel = "nqos.ovn.org/zone"
	// DefaultHeartbeatDuration is a zone Lease's duration (the kubelet's
	// node lease default).
	DefaultHeartbeatDuration = 40 * time.Second
	// zoneLeasePrefix + zone is the Lease's name.
	zoneLeasePrefix = "nqos-zone-"
)

// ZoneLeaseName is the name of zone's heartbeat Lease.
func ZoneLeaseName(zone string) string { return zoneLeasePrefix + zone }

// heartbeat renews one zone's Lease.
type heartbeat struct {
	leases   leaseClient
	zone     string
	holder   string
	duration time.Duration
	log      *slog.Logger
	onRenew  func(err error)
	lease    *coordinationv1.Lease // the last one written; nil before

	mu      sync.Mutex
	since   time.Time // the last renewal, or the start before the first
	lastErr error     // the last renewal's error; nil after a success
}

// leaseClient is what a heartbeat needs of the Lease API.
type leaseClient interface {
	Get(ctx context.Context, name string, o metav1.GetOptions) (*coordinationv1.Lease, error)
	Create(ctx context.Context, l *coordinationv1.Lease, o metav1.CreateOptions) (*coordinationv1.Lease, error)
	Update(ctx context.Context, l *coordinationv1.Lease, o metav1.UpdateOptions) (*coordinationv1.Lease, error)
}

func newHeartbeat(kube kubernetes.Interface, namespace, zone, holder string, duration time.Duration, log *slog.Logger) *heartbeat {
	if duration <= 0 {
		duration = DefaultHeartbeatDuration
	}
	return &heartbeat{leases: kube.CoordinationV1().Leases(namespace), zone: zone, holder: holder, duration: duration, log: log}
}

// run renews the Lease at once, then every quarter of its duration, until
// ctx ends. A failed renewal is logged when renewals start failing and
// when they recover, and retried at the next tick.
func (h *heartbeat) run(ctx context.Context) {
	every := h.duration / 4
	failing := false
	h.record(time.Now(), nil)
	for {
		err := h.renew(ctx)
		if ctx.Err() == nil {
			h.record(time.Now(), err)
		}
		if h.onRenew != nil && ctx.Err() == nil {
			h.onRenew(err)
		}
		switch {
		case err != nil && !failing && ctx.Err() == nil:
			h.log.Warn("zone heartbeat: renewing the Lease failed; the aggregator will report this zone as not ready once it expires",
				"zone", h.zone, "lease", ZoneLeaseName(h.zone), "err", err)
			failing = true
		case err == nil && failing:
			h.log.Info("zone heartbeat: renewing the Lease again", "zone", h.zone)
			failing = false
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(every):
		}
	}
}

// record notes one renewal's outcome at now: a success moves since.
func (h *heartbeat) record(now time.Time, err error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.lastErr = err
	if err == nil {
		h.since = now
	}
}

// expired is why the zone is not ready once no renewal succeeded for the
// Lease's duration (the aggregator then reports the zone's heartbeat as
// expired), naming the Lease and the last error; nil before that.
func (h *heartbeat) expired(now time.Time) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.lastErr == nil || now.Sub(h.since) < h.duration {
		return nil
	}
	return fmt.Errorf("zone heartbeat Lease %s not renewed for %v (the aggregator reports this zone as %s): %w",
		ZoneLeaseName(h.zone), now.Sub(h.since).Round(time.Second), reasonHeartbeatExpired, h.lastErr)
}

// renew sets the Lease's renewTime to now, creating it when missing.
func (h *heartbeat) renew(ctx context.Context) error {
	now := metav1.NewMicroTime(time.Now())
	secs := int32(math.Ceil(h.duration.Seconds()))
	if h.lease == nil {
		cur, err := h.leases.Get(ctx, ZoneLeaseName(h.zone), metav1.GetOptions{})
		switch {
		case apierrors.IsNotFound(err):
			l := &coordinationv1.Lease{
				ObjectMeta: metav1.ObjectMeta{Name: ZoneLeaseName(h.zone), Labels: map[string]string{ZoneLeaseLabel: h.zone}},
				Spec: coordinationv1.LeaseSpec{HolderIdentity: &h.holder, LeaseDurationSeconds: &secs,
					AcquireTime: &now, RenewTime: &now},
			}
			created, err := h.leases.Create(ctx, l, metav1.CreateOptions{})
			if err != nil {
				return fmt.Errorf("zone %s: create Lease %s: %w", h.zone, l.Name, err)
			}
			h.lease = created
			return nil
		case err != nil:
			return fmt.Errorf("zone %s: get Lease %s: %w", h.zone, ZoneLeaseName(h.zone), err)
		}
		h.lease = cur
	}
	l := h.lease.DeepCopy()
	if l.Labels == nil {
		l.Labels = map[string]string{}
	}
	l.Labels[ZoneLeaseLabel] = h.zone
	if l.Spec.HolderIdentity == nil || *l.Spec.HolderIdentity != h.holder {
		l.Spec.AcquireTime = &now
	}
	l.Spec.HolderIdentity, l.Spec.LeaseDurationSeconds, l.Spec.RenewTime = &h.holder, &secs, &now
	updated, err := h.leases.Update(ctx, l, metav1.UpdateOptions{})
	if err != nil {
		h.lease = nil // read it again next time (a conflict, or deleted)
		return fmt.Errorf("zone %s: renew Lease %s: %w", h.zone, l.Name, err)
	}
	h.lease = updated
	return nil
}
