package controller

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"
)

// Bounds of the Northbound's health after startup.
const (
	// ReconcileTimeout bounds one reconcile: its NB calls (a transaction
	// waiting for a reconnect) and its status write.
	ReconcileTimeout = 30 * time.Second
	// DefaultNBLostTimeout is how long, when Config.NBLostTimeout is
	// zero, a leader (Config.Fence set) goes on without a Northbound
	// connection before it stops and releases its lease to a replica
	// that may reach the NB.
	DefaultNBLostTimeout = 30 * time.Second
	// nbCheckEvery is how often the connection is looked at.
	nbCheckEvery = 250 * time.Millisecond
)

// ErrNBUnreachable ends a leader's run when its Northbound connection
// has been down for longer than the bound.
var ErrNBUnreachable = errors.New("Northbound unreachable")

// nbHealth is when the Northbound connection was last lost (zero while
// connected).
type nbHealth struct {
	mu        sync.Mutex
	downSince time.Time
}

// observe records the connection state at now and returns how long it
// has been down.
func (h *nbHealth) observe(connected bool, now time.Time) time.Duration {
	h.mu.Lock()
	defer h.mu.Unlock()
	switch {
	case connected:
		h.downSince = time.Time{}
		return 0
	case h.downSince.IsZero():
		h.downSince = now
	}
	return now.Sub(h.downSince)
}

// err is why the controller is not ready for its Northbound, nil while
// connected.
func (h *nbHealth) err() error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.downSince.IsZero() {
		return nil
	}
	return fmt.Errorf("Northbound disconnected since %s", h.downSince.UTC().Format(time.RFC3339))
}

// watchNB follows the connection until ctx ends: readiness says when it
// is down, and a leader whose connection stays down for longer than
// lostAfter stops (cause ErrNBUnreachable) so its lease is released.
func (c *Controller) watchNB(ctx context.Context, lostAfter time.Duration, connected func() bool) {
	every(ctx, nbCheckEvery, func() bool {
		down := c.nbHealth.observe(connected(), time.Now())
		if c.fence != "" && down > lostAfter {
			err := fmt.Errorf("%w for %v (bound %v): stopping so that another replica can lead", ErrNBUnreachable, down.Round(time.Millisecond), lostAfter)
			c.log.Error("Northbound lost", "err", err)
			c.depose(err)
			return false
		}
		return true
	})
}
