package controller

import (
	"errors"
	"fmt"
	"net/http"
	"sync"
)

// Reasons Ready gives while the controller is not ready.
var (
	errCachesNotSynced = errors.New("informer caches not synced")
	errNotSynced       = errors.New("first full Northbound sync not done")
)

// Ready returns nil once the informer caches synced, the startup
// garbage collection and migration succeeded and every object that
// existed at startup was reconciled once without an error (the first
// full Northbound sync); before that it says which step is missing.
func (c *Controller) Ready() error {
	switch {
	case !c.live.Load():
		return errCachesNotSynced
	case !c.synced.Load():
		return errNotSynced
	}
	if ok, left := c.first.complete(); !ok {
		return fmt.Errorf("%w: %d objects not reconciled yet", errNotSynced, left)
	}
	return nil
}

// ProbeHandler serves the two probes: /healthz answers 200 while the
// process serves HTTP, /readyz 200 when ready returns nil and 503 with
// its reason otherwise.
func ProbeHandler(ready func() error) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) {
		fmt.Fprintln(w, "ok")
	})
	mux.HandleFunc("/readyz", func(w http.ResponseWriter, _ *http.Request) {
		if err := ready(); err != nil {
			http.Error(w, "not ready: "+err.Error(), http.StatusServiceUnavailable)
			return
		}
		fmt.Fprintln(w, "ok")
	})
	return mux
}

// firstPass tracks the objects queued at startup until each was
// reconciled once without an error: the first full Northbound sync.
type firstPass struct {
	mu      sync.Mutex
	started bool
	left    map[string]struct{}
}

// expect records the keys queued at startup.
func (f *firstPass) expect(keys []string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.started = true
	f.left = make(map[string]struct{}, len(keys))
	for _, k := range keys {
		f.left[k] = struct{}{}
	}
}

// done records one reconcile of key; an error keeps key outstanding.
func (f *firstPass) done(key string, out outcome) {
	if out.err != nil {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	delete(f.left, key)
}

// complete reports whether every startup key was reconciled once.
func (f *firstPass) complete() (bool, int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.started && len(f.left) == 0, len(f.left)
}
