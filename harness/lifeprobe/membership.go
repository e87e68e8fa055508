package lifeprobe

import (
	"slices"
	"sync"
	"time"
)

// Membership records, from samples of a port group's members, when each
// LSP was first seen in it and, after that, first seen out of it. It is
// safe for one sampler and concurrent readers.
type Membership struct {
	mu     sync.Mutex
	joined map[string]time.Time
	left   map[string]time.Time
}

// NewMembership returns an empty record.
func NewMembership() *Membership {
	return &Membership{joined: map[string]time.Time{}, left: map[string]time.Time{}}
}

// Observe records one sample of the members taken at now.
func (r *Membership) Observe(members []string, now time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, m := range members {
		if _, ok := r.joined[m]; !ok {
			r.joined[m] = now
		}
	}
	for m := range r.joined {
		if _, gone := r.left[m]; !gone && !slices.Contains(members, m) {
			r.left[m] = now
		}
	}
}

// Times returns when lsp joined and left (zero when not seen).
func (r *Membership) Times(lsp string) (joined, left time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.joined[lsp], r.left[lsp]
}

// FirstSeen records when each name (an LSP appearing in the NB cache)
// was first announced; later announcements (after a reconnect) keep the
// first time. It is safe for concurrent use.
type FirstSeen struct {
	mu   sync.Mutex
	seen map[string]time.Time
}

// NewFirstSeen returns an empty record.
func NewFirstSeen() *FirstSeen { return &FirstSeen{seen: map[string]time.Time{}} }

// Add records name at the current time unless it was seen before.
func (c *FirstSeen) Add(name string) { c.AddAt(name, time.Now()) }

// AddAt records name at t unless it was seen before.
func (c *FirstSeen) AddAt(name string, t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.seen[name]; !ok {
		c.seen[name] = t
	}
}

// At returns when name was first seen.
func (c *FirstSeen) At(name string) (time.Time, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	t, ok := c.seen[name]
	return t, ok
}
