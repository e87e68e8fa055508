package controller

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"reflect"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"

	"github.com/nqos/nqos/api/v1alpha1"
)

// AggregateFieldManager is the field manager that owns status.status
// when the Aggregator writes it.
const AggregateFieldManager = "nqos-aggregate"

// Aggregate texts beyond upstream's two.
const (
	statusPendingPrefix = "NetworkQoS Destinations pending"
	// maxListedZones bounds the zones one status.status names.
	maxListedZones = 5
	// maxZoneMessage bounds the part of a zone's message quoted.
	maxZoneMessage = 200
)

// zoneFieldManager is the field manager a zone controller (Config.Node
// = zone) applies its conditions under; the Aggregator removes a
// vanished zone's conditions by applying an empty status as it.
func zoneFieldManager(zone string) string { return "nqos-" + zone }

// AggregatorConfig configures an Aggregator.
type AggregatorConfig struct {
	// Kube is the client configuration of the cluster.
	Kube *rest.Config
	// Log receives structured logs; nil discards them.
	Log *slog.Logger
	// Metrics registers the aggregator's metrics; nil keeps them private.
	Metrics prometheus.Registerer
	// HeartbeatNamespace is where the zone controllers' heartbeat Leases
	// are (Config.HeartbeatNamespace): a zone whose Lease expired is
	// reported as not ready until it is renewed. Empty: no Lease is
	// read, zones are judged by their conditions only.
	HeartbeatNamespace string
}

// Aggregator writes the aggregate status.status of every NetworkQoS from
// the per-zone readiness conditions the zone controllers (one per node,
// Config.Node) write, and removes the conditions of zones whose node no
// longer exists (every condition the zone's field manager owns). It connects to no Northbound. Every node is a zone: an
// object is applied once every node's zone reports it Ready for the
// object's current generation; a zone reporting False is named in the
// status with its reason, and zones that have not reported yet are named
// as pending.
type Aggregator struct {
	log     *slog.Logger
	dyn     dynamic.Interface
	queue   workqueue.TypedRateLimitingInterface[string]
	factory informers.SharedInformerFactory
	nodes   cache.SharedIndexInformer
	nqos    cache.SharedIndexInformer
	leases  cache.SharedIndexInformer // nil without HeartbeatNamespace
	beats   *zoneHeartbeats
	live    atomic.Bool
	first   firstPass

	writes, removals prometheus.Counter
	staleZones       prometheus.Gauge

	readiness readiness
}

// NewAggregator builds an aggregator; Run starts it.
func NewAggregator(cfg AggregatorConfig) (*Aggregator, error) {
	if cfg.Kube == nil {
		return nil, errors.New("aggregator: Config.Kube is required")
	}
	log := orDiscard(cfg.Log)
	kube, dyn, err := newClients("aggregator", cfg.Kube)
	if err != nil {
		return nil, err
	}
	if err := requireResource(kube.Discovery(), v1alpha1.GroupVersionResource()); err != nil {
		return nil, err
	}
	a := &Aggregator{
		log: log, dyn: dyn,
		queue:     workqueue.NewTypedRateLimitingQueueWithConfig(rateLimiter(), workqueue.TypedRateLimitingQueueConfig[string]{Name: "networkqos-aggregate"}),
		factory:   informers.NewSharedInformerFactory(listThenWatch{kube}, 0),
		readiness: readiness{err: errors.New("not started")},
		writes: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "nqos_aggregate_status_writes_total", Help: "status.status writes of the aggregator.",
		}),
		removals: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "nqos_aggregate_stale_zone_removals_total", Help: "Conditions of vanished zones (deleted nodes) removed by the aggregator, one per object and zone.",
		}),
		staleZones: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "nqos_aggregate_expired_zone_heartbeats", Help: "Zones whose controller's heartbeat Lease expired (reported as not ready).",
		}),
		beats: newZoneHeartbeats(),
	}
	reg := cfg.Metrics
	if reg == nil {
		reg = prometheus.NewRegistry()
	}
	for _, col := range []prometheus.Collector{a.writes, a.removals, a.staleZones} {
		if err := reg.Register(col); err != nil {
			return nil, fmt.Errorf("aggregator: register metrics: %w", err)
		}
	}
	a.nodes = a.factory.Core().V1().Nodes().Informer()
	if err := a.nodes.SetTransform(stripNode); err != nil {
		return nil, fmt.Errorf("aggregator: node informer: %w", err)
	}
	if a.nqos, err = typedInformer(dyn, v1alpha1.GroupVersionResource(), convertTo[v1alpha1.NetworkQoS], cache.Indexers{}); err != nil {
		return nil, err
	}
	if cfg.HeartbeatNamespace != "" {
		a.leases = leaseInformer(kube, cfg.HeartbeatNamespace)
		if _, err := a.leases.AddEventHandler(a.beats.handler()); err != nil {
			return nil, fmt.Errorf("aggregator: Lease informer: add handler: %w", err)
		}
	}
	if err := a.addHandlers(); err != nil {
		return nil, err
	}
	return a, nil
}

// stripNode keeps only the node's name: a zone is a node.
func stripNode(obj any) (any, error) {
	if n, ok := obj.(*corev1.Node); ok {
		return &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: n.Name, UID: n.UID, ResourceVersion: n.ResourceVersion}}, nil
	}
	return obj, nil
}

func (a *Aggregator) addHandlers() error {
	enqueue := func(obj any) {
		if !a.live.Load() {
			return
		}
		if key, err := cache.DeletionHandlingMetaNamespaceKeyFunc(obj); err == nil {
			a.queue.Add(key)
		}
	}
	all := func(any) {
		if !a.live.Load() {
			return
		}
		for _, key := range a.nqos.GetIndexer().ListKeys() {
			a.queue.Add(key)
		}
	}
	var errs []error
	if _, err := a.nqos.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: enqueue,
		UpdateFunc: func(oldObj, newObj any) {
			o, n := oldObj.(*v1alpha1.NetworkQoS), newObj.(*v1alpha1.NetworkQoS)
			if o.Generation != n.Generation || o.Status.Status != n.Status.Status || !reflect.DeepEqual(o.Status.Conditions, n.Status.Conditions) {
				enqueue(newObj)
			}
		},
	}); err != nil {
		errs = append(errs, fmt.Errorf("aggregator: NetworkQoS informer: add handler: %w", err))
	}
	if _, err := a.nodes.AddEventHandler(cache.ResourceEventHandlerFuncs{AddFunc: all, DeleteFunc: all}); err != nil {
		errs = append(errs, fmt.Errorf("aggregator: node informer: add handler: %w", err))
	}
	return errors.Join(errs...)
}

// NotReady is why the aggregator is not ready (caches not synced, or the
// first pass over every object not done), nil once it is.
func (a *Aggregator) NotReady() error {
	if err := a.readiness.get(); err != nil {
		return err
	}
	return a.first.pending()
}

// Run starts the informers, waits for their caches and aggregates until
// ctx is done; a status write in flight when ctx ends is abandoned (the
// next leader redoes it: every write is idempotent).
func (a *Aggregator) Run(ctx context.Context) error {
	defer a.queue.ShutDown()
	a.readiness.set(errors.New("waiting for the informer caches"))
	a.factory.Start(ctx.Done())
	go a.nqos.RunWithContext(ctx)
	synced := []cache.InformerSynced{a.nodes.HasSynced, a.nqos.HasSynced}
	if a.leases != nil {
		go a.leases.RunWithContext(ctx)
		synced = append(synced, a.leases.HasSynced)
	}
	if !cache.WaitForCacheSync(ctx.Done(), synced...) {
		err := errors.New("aggregator: informer caches did not sync before shutdown")
		a.readiness.set(err)
		return err
	}
	a.live.Store(true)
	keys := a.nqos.GetIndexer().ListKeys()
	a.first.expect(keys, nil)
	for _, key := range keys {
		a.queue.Add(key)
	}
	a.readiness.set(nil)
	a.log.Info("aggregator ready", "objects", len(keys), "zones", len(a.zones()))
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for a.processNext(ctx) {
			}
		}()
	}
	if a.leases != nil {
		wg.Add(1)
		go func() {
			defer wg.Done()
			a.beats.watch(ctx, a.heartbeatsChanged)
		}()
	}
	<-ctx.Done()
	a.queue.ShutDown()
	wg.Wait()
	return nil
}

func (a *Aggregator) processNext(ctx context.Context) bool {
	return workOne(ctx, a.queue, a.log, "aggregate", func(key string) (bool, error) {
		err := a.sync(ctx, key)
		a.first.done(key, outcome{err: err})
		return false, err
	})
}

// zones lists the nodes, sorted: every node is a zone.
func (a *Aggregator) zones() []string {
	keys := a.nodes.GetIndexer().ListKeys()
	sort.Strings(keys)
	return keys
}

// sync removes the vanished zones' conditions of one object, then writes
// its status.status.
func (a *Aggregator) sync(ctx context.Context, key string) error {
	obj, ok, err := a.nqos.GetIndexer().GetByKey(key)
	if err != nil {
		return fmt.Errorf("networkqos %s: cache: %w", key, err)
	}
	if !ok {
		return nil
	}
	nq := obj.(*v1alpha1.NetworkQoS)
	v := aggregateOf(nq, a.zones(), a.beats.staleZones())
	var errs []error
	for _, zone := range v.stale {
		if err := a.applyStatus(ctx, nq, zoneFieldManager(zone), nil); err != nil {
			errs = append(errs, fmt.Errorf("remove the conditions of vanished zone %s: %w", zone, err))
			continue
		}
		a.removals.Inc()
		a.log.Info("removed the conditions of a vanished zone", "networkqos", key, "zone", zone)
	}
	if v.status != nq.Status.Status {
		if err := a.applyStatus(ctx, nq, AggregateFieldManager, &v.status); err != nil {
			errs = append(errs, err)
		} else {
			a.writes.Inc()
		}
	}
	return errors.Join(errs...)
}

// aggregateStatus is the status of an aggregator's apply body:
// status.status only.
type aggregateStatus struct {
	Status string `json:"status"`
}

// applyStatus applies status.status (nil: an empty status, which drops
// every field the manager owned) as manager.
func (a *Aggregator) applyStatus(ctx context.Context, nq *v1alpha1.NetworkQoS, manager string, status *string) error {
	var body any
	if status != nil {
		body = aggregateStatus{*status}
	}
	if err := applyStatus(ctx, a.dyn, nq, manager, body); err != nil {
		return fmt.Errorf("networkqos %s: apply status as %s: %w", objectRef(nq), manager, err)
	}
	return nil
}

// verdict is the aggregate of one object: its status.status text and
// the zones whose conditions are stale (no such node).
type verdict struct {
	status string
	stale  []string
}

// heartbeatsChanged requeues every object: the set of zones whose
// heartbeat expired changed.
func (a *Aggregator) heartbeatsChanged(stale []string) {
	a.staleZones.Set(float64(len(stale)))
	a.log.Info("zones with an expired heartbeat changed", "zones", stale)
	for _, key := range a.nqos.GetIndexer().ListKeys() {
		a.queue.Add(key)
	}
}

// aggregateOf aggregates the per-zone readiness conditions of nq over
// zones (sorted), a zone whose heartbeat expired (in expired, with its
// Lease's last renewTime) failing whatever its condition says: a zone's
// NQOSReady-In-Zone-<zone>, else its
// Ready-In-Zone-<zone> (nqos writes both where ovnkube's NetworkQoS is
// off, the only place an Aggregator runs). A zone is failed when its condition is False, pending when it
// has none, one for an older generation, or one that is Unknown. Failed
// zones are named with their reason and message (upstream's aggregation
// only matched a fixed text no zone writes, so a zone's failure never
// showed); without one, pending zones are named.
func aggregateOf(nq *v1alpha1.NetworkQoS, zones []string, expired map[string]time.Time) verdict {
	byZone := map[string]*metav1.Condition{}
	for i := range nq.Status.Conditions {
		c := &nq.Status.Conditions[i]
		if zone, ok := strings.CutPrefix(c.Type, ConditionNQOSReadyPrefix); ok {
			byZone[zone] = c
		}
	}
	for i := range nq.Status.Conditions {
		c := &nq.Status.Conditions[i]
		if zone, ok := strings.CutPrefix(c.Type, ConditionOVNKReadyPrefix); ok && byZone[zone] == nil {
			byZone[zone] = c
		}
	}
	var v verdict
	var failed, pending []string
	known := map[string]bool{}
	for _, zone := range zones {
		known[zone] = true
		c := byZone[zone]
		if since, ok := expired[zone]; ok {
			failed = append(failed, fmt.Sprintf("zone %s: %s: %s", zone, reasonHeartbeatExpired, heartbeatMessage(since)))
			continue
		}
		switch {
		case c == nil || c.ObservedGeneration < nq.Generation || c.Status == metav1.ConditionUnknown:
			pending = append(pending, zone)
		case c.Status == metav1.ConditionFalse:
			failed = append(failed, fmt.Sprintf("zone %s: %s: %s", zone, c.Reason, truncate(c.Message, maxZoneMessage)))
		}
	}
	for zone := range byZone {
		if !known[zone] {
			v.stale = append(v.stale, zone)
		}
	}
	sort.Strings(v.stale)
	switch {
	case len(failed) > 0:
		v.status = StatusNotApplied + ": " + listed(failed, "; ", "zones")
	case len(zones) == 0:
		v.status = statusPendingPrefix + ": no nodes"
	case len(pending) > 0:
		v.status = statusPendingPrefix + " in zones " + listed(pending, ", ", "zones")
	default:
		v.status = StatusApplied
	}
	return v
}

// reasonHeartbeatExpired names, in status.status, a zone whose
// controller's heartbeat Lease expired.
const reasonHeartbeatExpired = "HeartbeatExpired"

// heartbeatMessage says since when a zone's controller is silent.
func heartbeatMessage(since time.Time) string {
	if since.IsZero() {
		return "its controller never renewed its heartbeat Lease"
	}
	return "no heartbeat from its controller since " + since.UTC().Format(time.RFC3339)
}

// listed joins at most maxListedZones items, counting the rest.
func listed(items []string, sep, what string) string {
	out := strings.Join(items[:min(len(items), maxListedZones)], sep)
	if len(items) > maxListedZones {
		out += fmt.Sprintf("%sand %d more %s", sep, len(items)-maxListedZones, what)
	}
	return out
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}
