package controller

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"sync"
	"time"

	"github.com/nqos/nqos/internal/ovnnb"
)

// DefaultResyncPeriod is how often, when Config.ResyncPeriod is zero,
// every object is reconciled and orphaned rows collected again: the
// backstop of drift repair, which otherwise follows every change of an
// owned row in the NB as it happens.
const DefaultResyncPeriod = 5 * time.Minute

// onOwnedChange requeues the owner of an owned row that changed in the
// NB (by anyone): its reconcile reverts what it did not write, and finds
// nothing to do after its own transaction.
func (c *Controller) onOwnedChange(key ovnnb.Key) {
	if c.live.Load() {
		c.queue.Add(key.String())
	}
}

// resync reconciles every object and collects orphaned rows every
// period until ctx ends.
func (c *Controller) resync(ctx context.Context, period time.Duration) {
	every(ctx, period, func() bool {
		c.enqueueAll()
		if err := c.collectOrphans(ctx); err != nil {
			c.metrics.nbFailed(err)
			c.log.Error("resync: garbage collection failed", "err", err)
		}
		return true
	})
}

// every calls fn each period, the first time one period from now, until
// ctx ends or fn returns false.
func every(ctx context.Context, period time.Duration, fn func() bool) {
	tick := time.NewTicker(period)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		if !fn() {
			return
		}
	}
}

// appliedRows remembers, per object, a fingerprint of the rows its last
// reconcile left complete in the NB (no port missing). A reconcile that
// wants the same rows again and still has to commit found them changed
// by someone else: that is a drift repair.
type appliedRows struct {
	mu sync.Mutex
	fp map[string][sha256.Size]byte
}

func newAppliedRows() *appliedRows { return &appliedRows{fp: map[string][sha256.Size]byte{}} }

func fingerprint(rows ovnnb.ObjectRows) [sha256.Size]byte {
	raw, err := json.Marshal(rows)
	if err != nil { // plain structs of strings, maps and numbers
		panic("controller: fingerprint rows: " + err.Error())
	}
	return sha256.Sum256(raw)
}

// same reports whether key's last complete rows had fingerprint fp.
func (a *appliedRows) same(key string, fp [sha256.Size]byte) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	prev, ok := a.fp[key]
	return ok && prev == fp
}

// set records fp as key's complete rows (complete false forgets them).
func (a *appliedRows) set(key string, fp [sha256.Size]byte, complete bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if complete {
		a.fp[key] = fp
	} else {
		delete(a.fp, key)
	}
}
