package controller

import (
	"errors"
	"fmt"
	"net/http"
	"sync"
)

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

// firstPass tracks the objects queued at startup that the startup sync
// did not sync until each was reconciled once without an error: then the
// first full Northbound sync is done. The status writes of the objects
// the startup sync wrote follow in their reconciles, after ready.
type firstPass struct {
	mu      sync.Mutex
	started bool
	left    map[string]struct{}
}

// expect records the keys queued at startup, but those synced already.
func (f *firstPass) expect(keys []string, synced map[string]bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.started = true
	f.left = make(map[string]struct{}, len(keys))
	for _, k := range keys {
		if !synced[k] {
			f.left[k] = struct{}{}
		}
	}
}

// done records one reconcile of key; an error, or waiting for the
// cache of other nodes' pods, keeps key outstanding.
func (f *firstPass) done(key string, out outcome) {
	if out.err != nil || out.waiting {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	delete(f.left, key)
}

// pending says how many startup objects were not reconciled yet; nil
// once every one was.
func (f *firstPass) pending() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	switch {
	case !f.started:
		return errors.New("first full NB sync not started")
	case len(f.left) > 0:
		return fmt.Errorf("first full NB sync: %d objects not reconciled yet", len(f.left))
	}
	return nil
}
