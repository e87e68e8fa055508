package harness

import (
	"context"
	"fmt"
	"sync"
	"time"
)

// auditor polls the NB audit while the steps run, when the scenario asks
// for it, and is also sampled after every step. Polling samples the NB
// cache: a violation shorter than the interval can be missed between
// steps.
type auditor struct {
	nb     NB
	mu     sync.Mutex
	seen   map[string]bool
	out    []string
	cancel context.CancelFunc
	wg     sync.WaitGroup
}

// startAudit starts polling; a nil *auditor (no nbAudit invariant) does
// nothing.
func (ex *execution) startAudit(ctx context.Context) *auditor {
	if !ex.sc.Invariants.NBAudit {
		return nil
	}
	interval := ex.r.AuditInterval
	if interval <= 0 {
		interval = 5 * time.Millisecond
	}
	ctx, cancel := context.WithCancel(ctx)
	a := &auditor{nb: ex.env, seen: map[string]bool{}, cancel: cancel}
	a.wg.Add(1)
	go func() {
		defer a.wg.Done()
		tick := time.NewTicker(interval)
		defer tick.Stop()
		for {
			a.sample()
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
		}
	}()
	return a
}

// sample records the violations the NB shows now.
func (a *auditor) sample() {
	if a == nil {
		return
	}
	for _, v := range a.nb.Audit() {
		s := fmt.Sprintf("%s: %s", v.Row, v.Problem)
		a.mu.Lock()
		if !a.seen[s] {
			a.seen[s] = true
			a.out = append(a.out, s)
		}
		a.mu.Unlock()
	}
}

// stop ends polling and returns every distinct violation seen, in order.
func (a *auditor) stop() []string {
	if a == nil {
		return nil
	}
	a.cancel()
	a.wg.Wait()
	a.sample()
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.out
}
