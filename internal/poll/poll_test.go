package poll

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"
)

func TestUntil(t *testing.T) {
	boom := errors.New("read failed")
	cases := []struct {
		name    string
		cond    func(n int) (bool, error)
		wantErr error
		wantSub string
		wantN   int
	}{
		{"immediate", func(int) (bool, error) { return true, nil }, nil, "", 1},
		{"third", func(n int) (bool, error) { return n >= 3, nil }, nil, "", 3},
		{"hard error stops at once", func(int) (bool, error) { return false, boom }, boom, "read failed", 1},
		{"retry then ok", func(n int) (bool, error) {
			if n < 2 {
				return false, Retry("port %d missing", n)
			}
			return true, nil
		}, nil, "", 2},
		{"never", func(int) (bool, error) { return false, Retry("port missing") }, ErrTimeout, "last: not yet: port missing", -1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			n := 0
			err := Until(context.Background(), 100*time.Millisecond, time.Millisecond, "wait for x", func(context.Context) (bool, error) {
				n++
				return c.cond(n)
			})
			if c.wantErr == nil {
				if err != nil {
					t.Fatalf("err %v, want nil", err)
				}
			} else {
				if !errors.Is(err, c.wantErr) || !strings.Contains(err.Error(), c.wantSub) || !strings.HasPrefix(err.Error(), "wait for x") {
					t.Fatalf("err %v, want %v containing %q", err, c.wantErr, c.wantSub)
				}
			}
			if c.wantN >= 0 && n != c.wantN {
				t.Errorf("evaluated %d times, want %d", n, c.wantN)
			}
		})
	}
}

func TestUntilCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	err := Until(ctx, time.Second, time.Millisecond, "x", func(context.Context) (bool, error) { return false, nil })
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err %v, want context.Canceled", err)
	}
}

// A check the deadline cut short (its command killed with ctx) reports
// the timeout and the state last seen, not the kill; a hard error before
// the deadline still stops the wait at once.
func TestUntilDeadlineKillsCheck(t *testing.T) {
	killed := errors.New("signal: killed")
	err := Until(context.Background(), 50*time.Millisecond, time.Millisecond, "binding on node1", func(ctx context.Context) (bool, error) {
		if ctx.Err() == nil {
			select {
			case <-ctx.Done():
				return false, killed
			case <-time.After(5 * time.Millisecond):
				return false, Retry("chassis %q", "node2")
			}
		}
		return false, killed
	})
	if !errors.Is(err, ErrTimeout) || !strings.Contains(err.Error(), `last: not yet: chassis "node2"`) || errors.Is(err, killed) {
		t.Fatalf("err %v, want a timeout naming the last state, not the kill", err)
	}
}
