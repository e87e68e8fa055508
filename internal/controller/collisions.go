package controller

import (
	"fmt"
	"sort"
	"strings"
	"sync"

	"github.com/nqos/nqos/internal/qos"
)

// resultCache holds the last applied Result of every object and which
// (switch, priority) slots they use, to find priority collisions, and
// which collisions were already reported.
type resultCache struct {
	mu       sync.Mutex
	results  map[string]qos.Result
	slots    map[string]map[string]struct{} // "switch/priority" -> keys
	reported map[string]struct{}            // "a|b|switch/priority"
	warned   map[string]map[string]struct{} // key -> "reason|text" recorded as events
}

func newResultCache() *resultCache {
	return &resultCache{results: map[string]qos.Result{}, slots: map[string]map[string]struct{}{},
		reported: map[string]struct{}{}, warned: map[string]map[string]struct{}{}}
}

func slotOf(row qos.QoSRow) string { return fmt.Sprintf("%s/%d", row.Switch, row.Priority) }

func (rc *resultCache) store(r qos.Result) {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	rc.deleteLocked(r.Key())
	rc.results[r.Key()] = r
	for _, row := range r.QoS {
		s := slotOf(row)
		if rc.slots[s] == nil {
			rc.slots[s] = map[string]struct{}{}
		}
		rc.slots[s][r.Key()] = struct{}{}
	}
}

func (rc *resultCache) delete(key string) {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	rc.deleteLocked(key)
	delete(rc.warned, key)
	for pair := range rc.reported {
		a, rest, _ := strings.Cut(pair, "|")
		b, _, _ := strings.Cut(rest, "|")
		if a == key || b == key {
			delete(rc.reported, pair)
		}
	}
}

func (rc *resultCache) deleteLocked(key string) {
	old, ok := rc.results[key]
	if !ok {
		return
	}
	for _, row := range old.QoS {
		s := slotOf(row)
		delete(rc.slots[s], key)
		if len(rc.slots[s]) == 0 {
			delete(rc.slots, s)
		}
	}
	delete(rc.results, key)
}

// collision is a not yet reported priority collision between two objects.
type collision struct {
	a, b     qos.Result
	messages []string
}

// newCollisions returns the collisions of r's rows with other objects'
// rows (same switch, same OVN priority) not reported before, and marks
// them reported.
func (rc *resultCache) newCollisions(r qos.Result) []collision {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	var out []collision
	for _, row := range r.QoS {
		s := slotOf(row)
		others := make([]string, 0, len(rc.slots[s]))
		for k := range rc.slots[s] {
			if k != r.Key() {
				others = append(others, k)
			}
		}
		sort.Strings(others)
		for _, k := range others {
			a, b := r.Key(), k
			if b < a {
				a, b = b, a
			}
			id := a + "|" + b + "|" + s
			if _, done := rc.reported[id]; done {
				continue
			}
			rc.reported[id] = struct{}{}
			other := rc.results[k]
			msgs := qos.Collisions([]qos.Result{inSlot(r, s), inSlot(other, s)})
			out = append(out, collision{a: r, b: other, messages: msgs})
		}
	}
	return out
}

// reportCollisions emits one Warning event on each object involved in a
// new collision.
func (c *Controller) reportCollisions(r qos.Result) {
	for _, col := range c.results.newCollisions(r) {
		msg := strings.Join(col.messages, "; ")
		if msg == "" {
			continue
		}
		for _, res := range []qos.Result{col.a, col.b} {
			if nq, ok := c.inf.networkQoS(res.Key()); ok {
				c.events.warning(nq, "PriorityCollision", msg)
			}
		}
	}
}

// inSlot is r restricted to its QoS rows in one (switch, priority) slot.
func inSlot(r qos.Result, slot string) qos.Result {
	out := qos.Result{Namespace: r.Namespace, Name: r.Name}
	for _, row := range r.QoS {
		if slotOf(row) == slot {
			out.QoS = append(out.QoS, row)
		}
	}
	return out
}

// firstWarning reports whether the warning w of key was not recorded
// before, and marks it recorded until the object is deleted.
func (rc *resultCache) firstWarning(key, w string) bool {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	if _, done := rc.warned[key][w]; done {
		return false
	}
	if rc.warned[key] == nil {
		rc.warned[key] = map[string]struct{}{}
	}
	rc.warned[key][w] = struct{}{}
	return true
}
