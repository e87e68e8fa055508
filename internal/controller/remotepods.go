package controller

import (
	"context"
	"fmt"
	"sort"
	"sync"
	"sync/atomic"

	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"

	"github.com/nqos/nqos/internal/qos"
)

// remotePods is a zone controller's informer of the other nodes' pods,
// run only while some accepted object needs them: a podSelector or
// namespaceSelector destination on a network with discoverable pod IPs,
// whose address sets hold the selected pods of every node. Objects on
// ipamless networks only (selector destinations are rejected there) read
// no other node's pod, so a zone controller serving only those lists and
// watches its own node's pods alone.
//
// The informer starts when the first object needs it and stops when the
// last one no longer does (a later need starts a new one: a stopped
// informer cannot run again). An object that needs it is applied only
// from a compile that read a synced cache of the running informer
// (snapshot before the compile, check after it); otherwise its reconcile
// waits, and every waiting object is queued once the cache synced.
type remotePods struct {
	kube    kubernetes.Interface
	sel     fields.Selector
	handler cache.ResourceEventHandler
	synced  func(keys []string) // queues the objects waiting for a sync
	running func(on bool)       // metrics: the informer runs or not

	mu     sync.Mutex
	parent context.Context // Run's context; nil before Run
	inf    cache.SharedIndexInformer
	gen    uint64 // of inf; 0 before the first start
	isSync bool   // inf's cache synced
	stop   context.CancelFunc
	need   map[string]bool // objects whose last compile needs remote pods
}

// remoteView is what a compile read: the informer generation and
// whether its cache had synced.
type remoteView struct {
	gen    uint64
	synced bool
}

func newRemotePods(kube kubernetes.Interface, node string) *remotePods {
	return &remotePods{kube: kube, sel: fields.OneTermNotEqualSelector(podNodeField, node), need: map[string]bool{}}
}

// needsRemotePods is whether an object's compile result reads other
// nodes' pods: it is accepted and has destination address sets.
func needsRemotePods(r qos.Result) bool { return acceptedRows(r) && len(r.AddressSets) > 0 }

// begin makes ctx the parent of every informer started from now on.
func (r *remotePods) begin(ctx context.Context) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.parent = ctx
	if len(r.need) > 0 && r.inf == nil {
		r.startLocked()
	}
}

// view is the state a compile about to run reads.
func (r *remotePods) view() remoteView {
	r.mu.Lock()
	defer r.mu.Unlock()
	return remoteView{gen: r.gen, synced: r.inf != nil && r.isSync}
}

// indexer is the running informer's cache; nil while none runs.
func (r *remotePods) indexer() cache.Indexer {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.inf == nil {
		return nil
	}
	return r.inf.GetIndexer()
}

// running reports whether the informer runs (tests, metrics).
func (r *remotePods) isRunning() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.inf != nil
}

// want records whether key's compile (which read v) needs remote pods,
// starting or stopping the informer as the set of such objects becomes
// non-empty or empty. It reports whether that compile may be applied:
// always when it needs none, else only when it read the synced cache of
// the informer running now. When it may not and the cache synced since,
// retry is true: the caller queues the key again at once.
func (r *remotePods) want(key string, need bool, v remoteView) (ok, retry bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !need {
		delete(r.need, key)
		if len(r.need) == 0 && r.inf != nil {
			r.stopLocked()
		}
		return true, false
	}
	r.need[key] = true
	if r.inf == nil && r.parent != nil {
		r.startLocked()
	}
	if v.synced && v.gen == r.gen && r.inf != nil {
		return true, false
	}
	return false, r.inf != nil && r.isSync
}

// setNeeds replaces the set of objects that need remote pods (the
// startup sync compiled every object) and starts or stops the informer.
func (r *remotePods) setNeeds(keys []string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.need = make(map[string]bool, len(keys))
	for _, k := range keys {
		r.need[k] = true
	}
	switch {
	case len(r.need) > 0 && r.inf == nil && r.parent != nil:
		r.startLocked()
	case len(r.need) == 0 && r.inf != nil:
		r.stopLocked()
	}
}

// waitSynced waits until the running informer's cache synced; it fails
// when ctx ends first or no informer runs.
func (r *remotePods) waitSynced(ctx context.Context) (remoteView, error) {
	r.mu.Lock()
	inf, gen := r.inf, r.gen
	r.mu.Unlock()
	if inf == nil {
		return remoteView{}, fmt.Errorf("controller: no informer of other nodes' pods runs")
	}
	if !cache.WaitForCacheSync(ctx.Done(), inf.HasSynced) {
		return remoteView{}, fmt.Errorf("controller: other nodes' pods: cache did not sync: %w", ctx.Err())
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return remoteView{gen: gen, synced: r.gen == gen && r.isSync}, nil
}

func (r *remotePods) startLocked() {
	inf := podInformer(r.kube, r.sel)
	// Neither call fails on an informer that has not started. Events
	// reach the handler only once the cache synced: the initial list
	// (thousands of pods, each queueing every object with a destination
	// selector) is covered by queueing the waiting objects after it.
	_ = inf.SetTransform(stripRemotePod)
	var live atomic.Bool
	if r.handler != nil {
		_, _ = inf.AddEventHandler(cache.FilteringResourceEventHandler{
			FilterFunc: func(any) bool { return live.Load() },
			Handler:    r.handler,
		})
	}
	ctx, stop := context.WithCancel(r.parent)
	r.gen++
	r.inf, r.stop, r.isSync = inf, stop, false
	gen := r.gen
	go inf.RunWithContext(ctx)
	go func() {
		if !cache.WaitForCacheSync(ctx.Done(), inf.HasSynced) {
			return
		}
		live.Store(true)
		r.mu.Lock()
		if r.gen != gen {
			r.mu.Unlock()
			return
		}
		r.isSync = true
		keys := make([]string, 0, len(r.need))
		for k := range r.need {
			keys = append(keys, k)
		}
		r.mu.Unlock()
		sort.Strings(keys)
		if r.synced != nil {
			r.synced(keys)
		}
	}()
	if r.running != nil {
		r.running(true)
	}
}

func (r *remotePods) stopLocked() {
	r.stop()
	r.inf, r.stop, r.isSync = nil, nil, false
	if r.running != nil {
		r.running(false)
	}
}

// remoteView is the state of the informer of other nodes' pods a compile
// about to run reads (zero for the central controller).
func (c *Controller) remoteView() remoteView {
	if c.inf.remote == nil {
		return remoteView{}
	}
	return c.inf.remote.view()
}

// awaitRemotePods records whether key's compile r (which read v) needs
// other nodes' pods and reports whether the object must wait for their
// cache instead of being applied; it is queued again once the cache
// synced (at once when it synced after the compile read it).
func (c *Controller) awaitRemotePods(key string, r qos.Result, v remoteView) bool {
	if c.inf.remote == nil {
		return false
	}
	ok, retry := c.inf.remote.want(key, needsRemotePods(r), v)
	if retry {
		c.queue.Add(key)
	}
	return !ok
}

// startupRemotePods makes the startup compile rs complete: when some
// object needs other nodes' pods and the compile did not read their
// synced cache (read as v), it starts their informer, waits for its
// cache and compiles every object again.
func (c *Controller) startupRemotePods(ctx context.Context, rs []qos.Result, v remoteView) ([]qos.Result, error) {
	if c.inf.remote == nil {
		return rs, nil
	}
	var need []string
	for _, r := range rs {
		if needsRemotePods(r) {
			need = append(need, r.Key())
		}
	}
	c.inf.remote.setNeeds(need)
	if len(need) == 0 {
		return rs, nil
	}
	now, err := c.inf.remote.waitSynced(ctx)
	if err != nil {
		return nil, err
	}
	if v.synced && v.gen == now.gen {
		return rs, nil
	}
	c.log.Info("watching other nodes' pods: objects have selector destinations on networks with pod IPs", "objects", len(need))
	v = c.remoteView()
	rs = c.compileAll()
	return c.startupRemotePods(ctx, rs, v)
}
