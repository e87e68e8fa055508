package harness

import (
	"context"
	"fmt"
	"time"
)

// auditor is the NB invariant watcher of a scenario with
// invariants.nbAudit: it audits every committed NB state (not a periodic
// sample) from the scenario's first step until after its last.
type auditor struct {
	w     Watch
	start time.Time
}

// startAudit starts the watcher; a nil *auditor (no nbAudit invariant)
// does nothing. A watcher that cannot start is an environment error.
func (ex *execution) startAudit(ctx context.Context) (*auditor, error) {
	if !ex.sc.Invariants.NBAudit {
		return nil, nil
	}
	var neverOwn []ObjectKey
	for _, id := range ex.sc.Invariants.NeverOwnRows {
		m, _ := ex.sc.Manifests.Get(id)
		neverOwn = append(neverOwn, ObjectKey{Namespace: m.Namespace, Name: m.Name})
	}
	w, err := ex.env.Watch(ctx, neverOwn)
	if err != nil {
		return nil, fmt.Errorf("start the NB invariant watcher: %w", err)
	}
	return &auditor{w: w, start: ex.r.now()}, nil
}

// stop ends the watcher and returns every distinct sighting, in the order
// first seen, as "+<offset> <row>: <problem>" (offset from the watcher's
// start), and how many NB states were audited.
func (a *auditor) stop() ([]string, int) {
	if a == nil {
		return nil, 0
	}
	ss := a.w.Stop()
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = fmt.Sprintf("+%.3fs %s: %s", s.At.Sub(a.start).Seconds(), s.Row, s.Problem)
	}
	return out, a.w.Checks()
}
