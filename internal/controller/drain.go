package controller

import (
	"context"
	"errors"
	"time"

	"github.com/nqos/nqos/internal/ovnnb"
)

// DrainTimeout bounds how long a reconcile in flight when Run's context
// ends may go on: its NB transaction completes (or fails once this
// passes) instead of being abandoned half-way through its two steps.
// A context ended by a lost lease (cause ErrLeadershipLost) or by the
// NB refusing a transaction as fenced gets no drain: a deposed leader
// stops writing at once.
const DrainTimeout = 10 * time.Second

// workContext is the context reconciles run under: it ends DrainTimeout
// after ctx ends, at once when ctx ended because the lease was lost, or
// when the returned cancel runs.
func workContext(ctx context.Context) (context.Context, context.CancelFunc) {
	work, cancel := context.WithCancelCause(context.WithoutCancel(ctx))
	stop := context.AfterFunc(ctx, func() {
		if cause := context.Cause(ctx); errors.Is(cause, ErrLeadershipLost) || errors.Is(cause, ovnnb.ErrFenced) || errors.Is(cause, ErrNBUnreachable) {
			cancel(cause)
			return
		}
		time.AfterFunc(DrainTimeout, func() { cancel(context.DeadlineExceeded) })
	})
	return work, func() {
		stop()
		cancel(context.Canceled)
	}
}
