package controller

import (
	"sort"
	"sync"
)

// pending remembers which objects wait for which named NB rows (logical
// switch ports, logical switches), so the row appearing in the NB
// requeues exactly those objects.
type pending struct {
	mu     sync.Mutex
	byName map[string]map[string]struct{} // row name -> keys
	byKey  map[string][]string            // key -> row names
}

func newPending() *pending {
	return &pending{byName: map[string]map[string]struct{}{}, byKey: map[string][]string{}}
}

// set replaces the names key waits for (nil: none).
func (p *pending) set(key string, names []string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, n := range p.byKey[key] {
		if keys := p.byName[n]; keys != nil {
			delete(keys, key)
			if len(keys) == 0 {
				delete(p.byName, n)
			}
		}
	}
	delete(p.byKey, key)
	if len(names) == 0 {
		return
	}
	p.byKey[key] = append([]string(nil), names...)
	for _, n := range names {
		if p.byName[n] == nil {
			p.byName[n] = map[string]struct{}{}
		}
		p.byName[n][key] = struct{}{}
	}
}

// waiting returns the keys waiting for name, sorted.
func (p *pending) waiting(name string) []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	keys := make([]string, 0, len(p.byName[name]))
	for k := range p.byName[name] {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
