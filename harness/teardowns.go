package harness

import (
	"errors"
	"maps"
	"slices"
	"sync"
)

// Teardowns are the teardowns of the environments still up, so that a
// forced exit (a second Ctrl-C) can run them before the process ends.
// Each teardown runs once, whoever calls it first; a second caller waits
// for it and gets its error. The zero value is ready to use.
type Teardowns struct {
	mu   sync.Mutex
	next int
	fns  map[int]func() error
}

// Add registers close (wrapped so that it runs once) and returns the
// wrapped teardown and a function removing it from the set.
func (t *Teardowns) Add(close func() error) (teardown func() error, remove func()) {
	once := sync.OnceValue(close)
	if t == nil {
		return once, func() {}
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.fns == nil {
		t.fns = map[int]func() error{}
	}
	id := t.next
	t.next++
	t.fns[id] = once
	return once, func() {
		t.mu.Lock()
		defer t.mu.Unlock()
		delete(t.fns, id)
	}
}

// Run runs every registered teardown (each at most once, also when the
// runner is running it already) and joins their errors.
func (t *Teardowns) Run() error {
	if t == nil {
		return nil
	}
	t.mu.Lock()
	fns := make([]func() error, 0, len(t.fns))
	for _, id := range slices.Sorted(maps.Keys(t.fns)) {
		fns = append(fns, t.fns[id])
	}
	t.mu.Unlock()
	var errs []error
	for _, fn := range fns {
		errs = append(errs, fn())
	}
	return errors.Join(errs...)
}

// Len is how many teardowns are registered.
func (t *Teardowns) Len() int {
	if t == nil {
		return 0
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.fns)
}
