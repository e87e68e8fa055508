// Package controller owns the live NetworkQoS controller: informers on
// NetworkQoS, Pod, Namespace, NetworkAttachmentDefinition (and CUDN when
// installed), a rate-limited work queue keyed by NetworkQoS, the mapping
// of cluster events to the objects they affect, a startup sync in a few
// bounded NB transactions, one NB transaction per reconcile after it,
// through internal/ovnnb (requeued at once when a missing logical
// switch or port appears), status conditions and the aggregate
// status.status, collision events, the startup garbage collection and
// legacy-match migration, and metrics.
// Under an nqos_bug_<id> build tag only (internal/seeded) it also carries
// the two controller-side seeded bugs, teardown and noretry.
package controller

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/workqueue"

	"github.com/nqos/nqos/internal/ovnnb"
)

// NB is what the controller needs from the OVN Northbound client;
// *ovnnb.Client implements it.
type NB interface {
	Apply(ctx context.Context, key ovnnb.Key, want ovnnb.ObjectRows) (ovnnb.ApplyResult, error)
	Teardown(ctx context.Context, key ovnnb.Key) error
	OwnedKeys(ctx context.Context) ([]ovnnb.Key, error)
	LegacyRows(ctx context.Context) ([]ovnnb.LegacyRow, error)
	MigrateLegacyBatch(ctx context.Context, ms []ovnnb.Migration) (ovnnb.MigrateBatchResult, error)
	ApplyBatch(ctx context.Context, objs []ovnnb.KeyedRows) (ovnnb.BatchResult, error)
	TeardownBatch(ctx context.Context, keys []ovnnb.Key) (int, error)
	AdoptEarlierRows(ctx context.Context, ovnkubeOff bool) (ovnnb.AdoptResult, error)
	ForeignNetworkQoS(ctx context.Context, switches []string) ([]ovnnb.ForeignRow, error)
	OnLogicalSwitchPortAdd(fn func(lspName string))
	HasPort(name string) bool
	OnLogicalSwitchAdd(fn func(name string))
	OnOwnedRowChange(fn func(ovnnb.Key))
	HasSwitch(name string) bool
	TakeFence(ctx context.Context, holder string) error
	Connected() bool
}

// Config configures a Controller.
type Config struct {
	// Kube is the client configuration of the cluster.
	Kube *rest.Config
	// NB is the connected Northbound client.
	NB NB
	// DialNB, used when NB is nil, connects to the Northbound: Run calls
	// it while the informer caches fill, so the connection (and the NB
	// cache's first fill) overlaps the API list. The caller owns what it
	// returns; Run returns only after DialNB has.
	DialNB func(ctx context.Context) (NB, error)
	// Node, when set, restricts port-group members to pods scheduled on
	// it and names the condition Ready-In-Zone-<Node>; empty means one
	// central NB serving every node (condition Ready-In-Zone-global).
	Node string
	// OVNKubeNetworkQoS says OVN-Kubernetes's own NetworkQoS controller
	// runs in the cluster (its --enable-network-qos): nqos then writes
	// rows only on networks without discoverable pod IPs, leaves
	// Ready-In-Zone-* and status.status to it, and adopts only the rows
	// provably its own. False (the testbed, a cluster without it): nqos
	// serves every localnet and layer2 network and owns those too (see
	// conditions.go).
	OVNKubeNetworkQoS bool
	// Fence, when set (the leader's identity under leader election),
	// makes the startup sync first take the Northbound's leader fence for
	// this holder (ovnnb.Client.TakeFence): from then on the NB refuses
	// every transaction of an earlier leader, and this controller's once
	// a later leader takes it.
	Fence string
	// NBLostTimeout is how long a leader (Fence set) goes on without a
	// Northbound connection before it stops, releasing its lease; zero
	// means DefaultNBLostTimeout.
	NBLostTimeout time.Duration
	// HeartbeatNamespace, for a zone controller (Node set), is the
	// namespace of its zone's heartbeat Lease (ZoneLeaseName), renewed
	// while it runs; empty: no heartbeat.
	HeartbeatNamespace string
	// HeartbeatDuration is the Lease's duration (renewed every quarter
	// of it); zero means DefaultHeartbeatDuration.
	HeartbeatDuration time.Duration
	// Identity is the heartbeat Lease's holder; empty: the zone name.
	Identity string
	// ResyncPeriod is how often every object is reconciled and orphaned
	// rows collected again; zero means DefaultResyncPeriod.
	ResyncPeriod time.Duration
	// Log receives structured logs; nil discards them.
	Log *slog.Logger
	// Metrics registers the controller's metrics; nil keeps them private.
	Metrics prometheus.Registerer
}

// workers is the number of concurrent reconcilers.
const workers = 8

// Controller reconciles NetworkQoS objects into the OVN Northbound DB.
type Controller struct {
	nb     NB // nil until dialNB returned, when dialNB is set
	dialNB func(ctx context.Context) (NB, error)
	node   string
	zone   string
	fence  string
	// ovnkube: OVN-Kubernetes's NetworkQoS runs (Config.OVNKubeNetworkQoS).
	ovnkube bool
	// fenceTaken is set once the startup sync took the fence (Run's
	// goroutine only).
	fenceTaken bool
	// depose ends the run when the NB refused a transaction as fenced.
	depose      context.CancelCauseFunc
	log         *slog.Logger
	kube        kubernetes.Interface
	dyn         dynamic.Interface
	queue       workqueue.TypedRateLimitingInterface[string]
	inf         *informerSet
	facts       *informerFacts
	metrics     *metrics
	events      *eventSink
	ports       *pending // objects waiting for logical switch ports
	switches    *pending // objects waiting for logical switches
	results     *resultCache
	applied     *appliedRows // complete rows per object, to count drift repairs
	resyncEvery time.Duration
	nbLostAfter time.Duration
	nbHealth    nbHealth
	first       firstPass  // startup objects not reconciled yet (Ready)
	heartbeat   *heartbeat // nil: none (central, or no namespace)

	live atomic.Bool // caches synced: event handlers map events to keys

	readiness readiness
}

// New builds a controller; Run starts it.
func New(cfg Config) (*Controller, error) {
	if cfg.Kube == nil || (cfg.NB == nil) == (cfg.DialNB == nil) {
		return nil, errors.New("controller: Config.Kube and exactly one of Config.NB and Config.DialNB are required")
	}
	log := orDiscard(cfg.Log)
	kube, dyn, err := newClients("controller", cfg.Kube)
	if err != nil {
		return nil, err
	}
	c := &Controller{
		nb: cfg.NB, dialNB: cfg.DialNB, node: cfg.Node, zone: zoneName(cfg.Node), fence: cfg.Fence, ovnkube: cfg.OVNKubeNetworkQoS, log: log,
		kube: kube, dyn: dyn,
		queue:       workqueue.NewTypedRateLimitingQueueWithConfig(rateLimiter(), workqueue.TypedRateLimitingQueueConfig[string]{Name: "networkqos"}),
		ports:       newPending(),
		switches:    newPending(),
		results:     newResultCache(),
		applied:     newAppliedRows(),
		resyncEvery: cfg.ResyncPeriod,
		nbLostAfter: cfg.NBLostTimeout,
		readiness:   readiness{err: errors.New("not started")},
	}
	reg := cfg.Metrics
	if reg == nil {
		reg = prometheus.NewRegistry()
	}
	if c.metrics, err = newMetrics(reg, c.queue); err != nil {
		return nil, err
	}
	if c.inf, err = newInformerSet(kube, dyn, cfg.Node); err != nil {
		return nil, err
	}
	c.facts = &informerFacts{inf: c.inf}
	if cfg.Node != "" && cfg.HeartbeatNamespace != "" {
		holder := cfg.Identity
		if holder == "" {
			holder = c.zone
		}
		c.heartbeat = newHeartbeat(kube, cfg.HeartbeatNamespace, c.zone, holder, cfg.HeartbeatDuration, log)
		c.heartbeat.onRenew = c.metrics.heartbeatRenewed
	}
	c.events = newEventSink(kube, log)
	if err := c.inf.addHandlers(c); err != nil {
		return nil, err
	}
	if c.nb != nil {
		c.attachNB(c.nb)
	}
	return c, nil
}

// attachNB makes nb the controller's Northbound and subscribes to the
// rows objects wait for.
func (c *Controller) attachNB(nb NB) {
	c.nb = nb
	nb.OnLogicalSwitchPortAdd(c.onPortAdd)
	nb.OnLogicalSwitchAdd(c.onSwitchAdd)
	nb.OnOwnedRowChange(c.onOwnedChange)
}

// newClients are the API clients of a controller or the aggregator
// (who, naming it in errors): typed over protobufConfig, dynamic for the
// CRDs.
func newClients(who string, cfg *rest.Config) (*kubernetes.Clientset, *dynamic.DynamicClient, error) {
	kube, err := kubernetes.NewForConfig(protobufConfig(cfg))
	if err != nil {
		return nil, nil, fmt.Errorf("%s: kubernetes client: %w", who, err)
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: dynamic client: %w", who, err)
	}
	return kube, dyn, nil
}

// orDiscard is log, or a logger that discards for nil.
func orDiscard(log *slog.Logger) *slog.Logger {
	if log == nil {
		return slog.New(slog.DiscardHandler)
	}
	return log
}

// protobufConfig is cfg speaking protobuf to the built-in APIs (pods
// and namespaces decode several times faster than from JSON) unless cfg
// names a content type; the dynamic client for the CRDs stays on JSON.
func protobufConfig(cfg *rest.Config) *rest.Config {
	if cfg.ContentType != "" {
		return cfg
	}
	pc := rest.CopyConfig(cfg)
	pc.ContentType = runtime.ContentTypeProtobuf
	pc.AcceptContentTypes = runtime.ContentTypeProtobuf + "," + runtime.ContentTypeJSON
	return pc
}

func zoneName(node string) string {
	if node == "" {
		return "global"
	}
	return node
}

func rateLimiter() workqueue.TypedRateLimiter[string] {
	return workqueue.NewTypedMaxOfRateLimiter(
		workqueue.NewTypedItemExponentialFailureRateLimiter[string](5*time.Millisecond, time.Minute),
		&workqueue.TypedBucketRateLimiter[string]{Limiter: newBucket()},
	)
}

// Ready reports whether the informer caches synced and the startup sync
// (garbage collection, legacy migration, the first full NB sync) has
// succeeded; a readiness probe serves it.
func (c *Controller) Ready() bool { return c.NotReady() == nil }

// NotReady is why the controller is not ready (the last startup error
// while it retries), nil once it is.
func (c *Controller) NotReady() error {
	if err := c.readiness.get(); err != nil {
		return err
	}
	if err := c.nbHealth.err(); err != nil {
		return err
	}
	if c.heartbeat != nil {
		if err := c.heartbeat.expired(time.Now()); err != nil {
			return err
		}
	}
	return c.first.pending() // every startup object reconciled once
}

// readiness is why a controller or the aggregator is not ready, nil
// once it is.
type readiness struct {
	mu  sync.Mutex
	err error
}

func (r *readiness) get() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.err
}

func (r *readiness) set(err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.err = err
}

// Run starts the informers, waits for their caches, runs the startup
// sync (retried with backoff until it succeeds), then reconciles until
// ctx is done.
func (c *Controller) Run(ctx context.Context) error {
	defer c.events.close()
	defer c.queue.ShutDown()
	c.readiness.set(errors.New("waiting for the informer caches and the Northbound connection"))
	if c.heartbeat != nil {
		hbCtx, stopHeartbeat := context.WithCancel(ctx)
		hbDone := make(chan struct{})
		go func() {
			defer close(hbDone)
			c.heartbeat.run(hbCtx)
		}()
		defer func() { stopHeartbeat(); <-hbDone }()
	}
	nbDone := c.connectNB(ctx)
	err := c.inf.start(ctx)
	if nbErr := <-nbDone; err == nil {
		err = nbErr
	}
	if err != nil {
		c.readiness.set(err)
		return err
	}
	c.live.Store(true)
	c.readiness.set(errors.New("startup NB sync running"))
	ctx, c.depose = context.WithCancelCause(ctx)
	defer c.depose(nil)
	synced, err := c.startup(ctx)
	if err != nil {
		c.readiness.set(err)
		return err
	}
	keys := c.inf.networkQoSKeys()
	c.first.expect(keys, synced)
	for _, key := range keys {
		c.queue.Add(key)
	}
	c.readiness.set(nil)
	c.log.Info("controller ready", "zone", c.zone)
	work, cancelWork := workContext(ctx)
	defer cancelWork()
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			// After ctx ends no new item starts; the one in flight
			// finishes under work.
			for ctx.Err() == nil && c.processNext(work) {
			}
		}()
	}
	period := c.resyncEvery
	if period <= 0 {
		period = DefaultResyncPeriod
	}
	lostAfter := c.nbLostAfter
	if lostAfter <= 0 {
		lostAfter = DefaultNBLostTimeout
	}
	wg.Add(2)
	go func() {
		defer wg.Done()
		c.resync(ctx, period)
	}()
	go func() {
		defer wg.Done()
		c.watchNB(ctx, lostAfter, c.nb.Connected)
	}()
	<-ctx.Done()
	c.queue.ShutDown()
	wg.Wait()
	if cause := context.Cause(ctx); errors.Is(cause, ovnnb.ErrFenced) || errors.Is(cause, ErrNBUnreachable) {
		c.readiness.set(cause)
		return fmt.Errorf("controller: stopped writing: %w", cause)
	}
	return nil
}

// connectNB dials the Northbound in the background when the controller
// has none yet; the channel yields the dial's error once it returned.
func (c *Controller) connectNB(ctx context.Context) <-chan error {
	done := make(chan error, 1)
	if c.nb != nil {
		done <- nil
		return done
	}
	go func() {
		nb, err := c.dialNB(ctx)
		if err != nil {
			done <- fmt.Errorf("controller: Northbound: %w", err)
			return
		}
		c.attachNB(nb)
		done <- nil
	}()
	return done
}

// onPortAdd requeues, without backoff, every object waiting for lsp.
func (c *Controller) onPortAdd(lsp string) {
	for _, key := range c.ports.waiting(lsp) {
		c.queue.Add(key)
	}
}

// onSwitchAdd requeues, without backoff, every object waiting for the
// logical switch ls (its Apply failed with ovnnb.ErrMissingSwitch).
func (c *Controller) onSwitchAdd(ls string) {
	for _, key := range c.switches.waiting(ls) {
		c.queue.Add(key)
	}
}
