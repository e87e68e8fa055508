package ovsdbmon

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
)

// Sync makes an echo round trip on the monitor's connection. ovsdb-server
// queues a monitor's notifications on its connection ahead of later
// replies, so when Sync returns every transaction the server committed
// before it handled the echo has been received: handed to Options.Handle,
// or queued for Next.
func (m *Monitor) Sync(ctx context.Context) error {
	m.mu.Lock()
	if m.err != nil {
		err := m.err
		m.mu.Unlock()
		return fmt.Errorf("ovsdb monitor sync: %w", err)
	}
	m.syncSeq++
	id := fmt.Sprintf("%s%d", syncPrefix, m.syncSeq)
	ch := make(chan struct{})
	m.syncs[id] = ch
	m.mu.Unlock()
	defer func() {
		m.mu.Lock()
		delete(m.syncs, id)
		m.mu.Unlock()
	}()
	if err := m.write(map[string]any{"method": "echo", "params": []any{id}, "id": id}); err != nil {
		return fmt.Errorf("ovsdb monitor sync: %w", err)
	}
	select {
	case <-ch:
		return nil
	case <-m.done:
		return fmt.Errorf("ovsdb monitor sync: %w", m.Err())
	case <-ctx.Done():
		return fmt.Errorf("ovsdb monitor sync: %w", ctx.Err())
	}
}

// synced releases the Sync waiting for the reply msg.
func (m *Monitor) synced(msg rpcMsg) {
	var id string
	if json.Unmarshal(msg.ID, &id) != nil {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if ch, ok := m.syncs[id]; ok {
		close(ch)
		delete(m.syncs, id)
	}
}

// queue is an unbounded FIFO between the reader and Next: the reader
// never waits for the consumer, so the server's send backlog stays empty
// and it keeps sending one notification per transaction instead of
// merging them.
type queue struct {
	mu    sync.Mutex
	items []Notification
	err   error
	ready chan struct{}
}

func (q *queue) init() { q.ready = make(chan struct{}, 1) }

func (q *queue) push(n Notification) {
	q.mu.Lock()
	q.items = append(q.items, n)
	q.mu.Unlock()
	q.signal()
}

// fail ends the queue: pop returns err once the queued items are taken.
func (q *queue) fail(err error) {
	q.mu.Lock()
	if q.err == nil {
		q.err = err
	}
	q.mu.Unlock()
	q.signal()
}

func (q *queue) signal() {
	select {
	case q.ready <- struct{}{}:
	default:
	}
}

func (q *queue) pop(ctx context.Context) (Notification, error) {
	for {
		q.mu.Lock()
		if len(q.items) > 0 {
			n := q.items[0]
			q.items[0] = Notification{}
			q.items = q.items[1:]
			more := len(q.items) > 0 || q.err != nil
			q.mu.Unlock()
			if more {
				q.signal()
			}
			return n, nil
		}
		err := q.err
		q.mu.Unlock()
		if err != nil {
			q.signal()
			return Notification{}, err
		}
		select {
		case <-ctx.Done():
			return Notification{}, ctx.Err()
		case <-q.ready:
		}
	}
}
