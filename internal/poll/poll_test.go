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
