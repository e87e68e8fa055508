package controller

import (
	"context"
	"time"
)

// DrainTimeout bounds how long a reconcile in flight when Run's context
// ends may go on: its NB transaction completes (or fails once this
// passes) instead of being abandoned half-way through its two steps.
const DrainTimeout = 10 * time.Second

// workContext is the context reconciles run under: it ends DrainTimeout
// after ctx ends, or when the returned cancel runs.
func workContext(ctx context.Context) (context.Context, context.CancelFunc) {
	work, cancel := context.WithCancel(context.WithoutCancel(ctx))
	stop := context.AfterFunc(ctx, func() { time.AfterFunc(DrainTimeout, cancel) })
	return work, func() {
		stop()
		cancel()
	}
}
