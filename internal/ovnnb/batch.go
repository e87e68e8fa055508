package ovnnb

import (
	"context"
	"fmt"
	"strings"
)

// Batch bounds: one batched transaction carries the changes of at most
// MaxBatchObjects objects and, once it holds one, at most maxBatchOps
// operations, so a start against a large NB is a few bounded transactions
// rather than one per object or one of unbounded size.
const (
	MaxBatchObjects = 100
	maxBatchOps     = 4000
)

// KeyedRows is one object's wanted rows in a batch.
type KeyedRows struct {
	Key  Key
	Rows ObjectRows
}

// Outcome tells what a batched write did per item, by the item's key K:
// the outcome R of each item planned, the items left out, and how many
// transactions were committed.
type Outcome[K comparable, R any] struct {
	// Results are the outcomes of the items planned.
	Results map[K]R
	// Failed are the items left out, with why (invalid rows, a foreign
	// row in the way, a missing switch): nothing of theirs was written.
	Failed map[K]error
	// Transactions is how many transactions were committed.
	Transactions int
}

func newOutcome[K comparable, R any]() Outcome[K, R] {
	return Outcome[K, R]{Results: map[K]R{}, Failed: map[K]error{}}
}

// BatchResult tells what ApplyBatch did per object: Results are as
// Apply's, with Changed set for the objects written.
type BatchResult = Outcome[Key, ApplyResult]

// ApplyBatch moves the owned rows of many objects to their wanted rows,
// as Apply does for one, packing the objects' changes into as few
// transactions as the batch bounds allow; objects without changes add
// nothing. An object that cannot be planned is left out and named in
// Failed. The transactions are committed in order, one at a time, while
// the next batch is planned. A failed transaction is the error: the
// objects of the transactions committed before it are applied (their
// Results say Changed), the others are not.
func (c *Client) ApplyBatch(ctx context.Context, objs []KeyedRows) (BatchResult, error) {
	res := newOutcome[Key, ApplyResult]()
	sw, err := c.switchIndex(ctx)
	if err != nil {
		return res, fmt.Errorf("apply batch: %w", err)
	}
	com := c.startCommitter(ctx)
	err = c.planBatches(ctx, objs, sw, com, &res)
	committed, cerr := com.wait()
	res.Transactions = len(committed)
	for _, b := range committed {
		for _, k := range b.keys {
			r := res.Results[k]
			r.Changed = true
			res.Results[k] = r
		}
	}
	if cerr != nil {
		return res, cerr
	}
	return res, err
}

// planBatches plans objs into bounded batches and hands each full one to
// com; it stops when com has failed.
func (c *Client) planBatches(ctx context.Context, objs []KeyedRows, sw switchIndex, com *committer, res *BatchResult) error {
	named := new(int) // one counter: named UUIDs stay unique in every transaction
	b := c.newBatch(sw, named)
	for _, o := range objs {
		if _, dup := res.Results[o.Key]; dup || res.Failed[o.Key] != nil {
			return fmt.Errorf("apply batch: NetworkQoS %s is listed twice", o.Key)
		}
		p, r, err := c.planObject(ctx, o, sw, named)
		res.Results[o.Key] = r
		if err != nil {
			res.Failed[o.Key] = err
			continue
		}
		if p.size() == 0 {
			continue
		}
		if b.full(p) {
			if !com.send(b) {
				return nil // com's error is the result
			}
			b = c.newBatch(sw, named)
		}
		b.add(o.Key, p)
	}
	com.send(b)
	return nil
}

// planObject plans one object of a batch; err says why it is left out.
func (c *Client) planObject(ctx context.Context, o KeyedRows, sw switchIndex, named *int) (*planner, ApplyResult, error) {
	if err := validate(o.Key, o.Rows); err != nil {
		return nil, ApplyResult{}, err
	}
	p := c.plannerOn(o.Key, sw, named)
	if err := c.planInto(ctx, p, o.Rows); err != nil {
		return nil, ApplyResult{}, fmt.Errorf("NetworkQoS %s: plan: %w", o.Key, err)
	}
	r := ApplyResult{MissingPorts: sortedKeys(p.missingPorts), MissingSwitches: sortedKeys(p.missingSwitches)}
	if len(r.MissingSwitches) > 0 {
		return nil, r, fmt.Errorf("NetworkQoS %s: %w: %s", o.Key, ErrMissingSwitch, strings.Join(r.MissingSwitches, ", "))
	}
	return p, r, nil
}

// batch is one transaction being filled with the changes of objects.
type batch struct {
	*planner // the combined operations
	keys     []Key
}

func (c *Client) newBatch(sw switchIndex, named *int) *batch {
	return &batch{planner: c.plannerOn(Key{}, sw, named)}
}

// full reports whether adding p would exceed the bounds.
func (b *batch) full(p *planner) bool {
	return len(b.keys) > 0 && (len(b.keys) >= MaxBatchObjects || b.size()+p.size() > maxBatchOps)
}

func (b *batch) add(key Key, p *planner) {
	b.absorb(p)
	b.keys = append(b.keys, key)
}

// committer commits batches in the order sent, one transaction at a
// time, on its own goroutine; after a failed one it commits no more.
type committer struct {
	c         *Client
	ctx       context.Context
	queue     chan *batch
	done      chan struct{}
	failed    chan struct{} // closed when a commit failed
	committed []*batch      // owned by the goroutine until done
	err       error
}

func (c *Client) startCommitter(ctx context.Context) *committer {
	com := &committer{c: c, ctx: ctx, queue: make(chan *batch, 1), done: make(chan struct{}), failed: make(chan struct{})}
	go com.run()
	return com
}

func (com *committer) run() {
	defer close(com.done)
	for b := range com.queue {
		if com.err != nil {
			continue // drain: nothing after a failed transaction
		}
		ops := b.operations()
		if len(ops) == 0 {
			continue
		}
		if err := com.c.commit(com.ctx, ops); err != nil {
			com.err = fmt.Errorf("apply batch of %d NetworkQoS (%s): %w", len(b.keys), keyList(b.keys), err)
			close(com.failed)
			continue
		}
		com.committed = append(com.committed, b)
	}
}

// send queues b; false once a commit has failed (b is not committed).
func (com *committer) send(b *batch) bool {
	select {
	case <-com.failed:
		return false
	case com.queue <- b:
		return true
	}
}

// wait ends the queue and returns the committed batches, in order, and
// the error of the failed commit, if any.
func (com *committer) wait() ([]*batch, error) {
	close(com.queue)
	<-com.done
	return com.committed, com.err
}

// keyList names up to three keys and how many more.
func keyList(keys []Key) string {
	const shown = 3
	names := make([]string, 0, shown)
	for _, k := range keys[:min(len(keys), shown)] {
		names = append(names, k.String())
	}
	s := strings.Join(names, ", ")
	if len(keys) > shown {
		s += fmt.Sprintf(" and %d more", len(keys)-shown)
	}
	return s
}
