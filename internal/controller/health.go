package controller

import (
	"errors"
	"fmt"
	"net/http"
)

// Reasons Ready gives while the controller is not ready.
var (
	errCachesNotSynced = errors.New("informer caches not synced")
	errNotSynced       = errors.New("first full Northbound sync not done")
)

// Ready returns nil once the informer caches synced and the startup sync
// (garbage collection, legacy migration, every object queued) succeeded;
// before that it says which step is missing.
func (c *Controller) Ready() error {
	switch {
	case !c.live.Load():
		return errCachesNotSynced
	case !c.synced.Load():
		return errNotSynced
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
