// Package poll is the one poll-until helper: it evaluates a condition at a
// fixed interval until it holds, fails, or a deadline passes. It is how
// every test and testbed step waits (never a bare sleep).
package poll

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// DefaultInterval is the interval Until uses when Options.Interval is zero.
const DefaultInterval = 20 * time.Millisecond

// ErrTimeout is wrapped by the error Until returns when the deadline passed
// before the condition held.
var ErrTimeout = errors.New("timed out")

// Cond reports whether the awaited state holds. A non-nil error stops the
// wait at once (a failed read is a failure, never "not yet"), unless it
// wraps ErrRetry.
type Cond func(ctx context.Context) (bool, error)

// ErrRetry, wrapped by a Cond's error, means "not yet, and here is why":
// the wait goes on, and the last such error is named if the deadline
// passes.
var ErrRetry = errors.New("not yet")

// Until evaluates cond every interval until it returns true (nil error),
// returns an error not wrapping ErrRetry (that error, wrapped), or timeout
// passes or ctx ends (an error wrapping ErrTimeout or ctx's error, naming
// what and the last ErrRetry reason). The first evaluation is immediate.
func Until(ctx context.Context, timeout, interval time.Duration, what string, cond Cond) error {
	if interval <= 0 {
		interval = DefaultInterval
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	t := time.NewTicker(interval)
	defer t.Stop()
	var last error
	for {
		ok, err := cond(ctx)
		switch {
		case err == nil && ok:
			return nil
		case err != nil && !errors.Is(err, ErrRetry) && ctx.Err() != nil && last != nil:
			// The deadline ended the check in flight (a command killed
			// with ctx): the state last seen says more than the kill.
			return timeoutErr(ctx, what, timeout, last)
		case err != nil && !errors.Is(err, ErrRetry):
			return fmt.Errorf("%s: %w", what, err)
		case err != nil:
			last = err
		}
		select {
		case <-ctx.Done():
			return timeoutErr(ctx, what, timeout, last)
		case <-t.C:
		}
	}
}

func timeoutErr(ctx context.Context, what string, timeout time.Duration, last error) error {
	cause := ErrTimeout
	if errors.Is(ctx.Err(), context.Canceled) {
		cause = ctx.Err()
	}
	if last != nil {
		return fmt.Errorf("%s: %w after %v (last: %v)", what, cause, timeout, last)
	}
	return fmt.Errorf("%s: %w after %v", what, cause, timeout)
}

// Retry wraps a reason as a "not yet" error for a Cond.
func Retry(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrRetry, fmt.Sprintf(format, args...))
}
