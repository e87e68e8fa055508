package ovnnb

import (
	"context"
	"fmt"
	"sort"

	"github.com/nqos/nqos/internal/ovnnb/nbdb"
	"github.com/nqos/nqos/internal/qos"
)

// Teardown removes every row key owns, in order: first its QoS rows are
// unbound from their switches and deleted (one transaction), then, once
// that committed, its port groups and address sets (a second one). No
// committed state ever has a QoS row referencing a deleted group or set.
func (c *Client) Teardown(ctx context.Context, key Key) error {
	_, err := c.teardownChunk(ctx, []Key{key})
	return err
}

// TeardownBatch removes every row the keys own, MaxBatchObjects objects
// at a time, in Teardown's order: per chunk one transaction deletes all
// their QoS rows and, once it committed, a second one all their port
// groups and address sets. It returns the transactions committed.
func (c *Client) TeardownBatch(ctx context.Context, keys []Key) (int, error) {
	n := 0
	for start := 0; start < len(keys); start += MaxBatchObjects {
		k, err := c.teardownChunk(ctx, keys[start:min(start+MaxBatchObjects, len(keys))])
		n += k
		if err != nil {
			return n, err
		}
	}
	return n, nil
}

// teardownChunk is Teardown of several keys in two transactions.
func (c *Client) teardownChunk(ctx context.Context, keys []Key) (int, error) {
	who := "NetworkQoS " + keyList(keys)
	sw, err := c.switchIndex(ctx)
	if err != nil {
		return 0, fmt.Errorf("%s: teardown: %w", who, err)
	}
	p := c.plannerOn(Key{}, sw, new(int))
	for _, key := range keys {
		have, err := c.ownedBy(ctx, key)
		if err != nil {
			return 0, fmt.Errorf("NetworkQoS %s: teardown: %w", key, err)
		}
		if err := p.qosRows(nil, have.qos); err != nil {
			return 0, fmt.Errorf("NetworkQoS %s: teardown: %w", key, err)
		}
	}
	n := 0
	if ops := p.operations(); len(ops) > 0 {
		if err := c.commit(ctx, ops); err != nil {
			return n, fmt.Errorf("%s: teardown QoS rows: %w", who, err)
		}
		n++
	}
	// Re-read: the first transaction is in the cache now (commit waits).
	for _, key := range keys {
		have, err := c.ownedBy(ctx, key)
		if err != nil {
			return n, fmt.Errorf("NetworkQoS %s: teardown: %w", key, err)
		}
		if len(have.qos) > 0 {
			return n, fmt.Errorf("NetworkQoS %s: teardown: %d QoS rows reappeared, keeping port groups and address sets", key, len(have.qos))
		}
		for _, pg := range have.pgs {
			if err := p.deleteRow(&nbdb.PortGroup{UUID: pg.UUID}); err != nil {
				return n, fmt.Errorf("NetworkQoS %s: teardown port group %s: %w", key, pg.Name, err)
			}
		}
		for _, as := range have.ases {
			if err := p.deleteRow(&nbdb.AddressSet{UUID: as.UUID}); err != nil {
				return n, fmt.Errorf("NetworkQoS %s: teardown address set %s: %w", key, as.Name, err)
			}
		}
	}
	if len(p.deleteNamed) == 0 {
		return n, nil
	}
	if err := c.commit(ctx, p.deleteNamed); err != nil {
		return n, fmt.Errorf("%s: teardown port groups and address sets: %w", who, err)
	}
	return n + 1, nil
}

// OwnedKeys lists the NetworkQoS objects owning any QoS row, port group
// or address set, sorted. A failed read is an error, never an empty list.
func (c *Client) OwnedKeys(ctx context.Context) ([]Key, error) {
	rs, _, err := c.ownedView(ctx)
	if err != nil {
		return nil, fmt.Errorf("list NetworkQoS owning NB rows: %w", err)
	}
	seen := map[Key]bool{}
	add := func(ext map[string]string) {
		if k, ok := KeyFromOwnerName(ext[qos.ObjectNameKey]); ok {
			seen[k] = true
		}
	}
	for _, q := range rs.qos {
		add(q.ExternalIDs)
	}
	for _, pg := range rs.pgs {
		add(pg.ExternalIDs)
	}
	for _, as := range rs.ases {
		add(as.ExternalIDs)
	}
	keys := make([]Key, 0, len(seen))
	for k := range seen {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		if keys[i].Namespace != keys[j].Namespace {
			return keys[i].Namespace < keys[j].Namespace
		}
		return keys[i].Name < keys[j].Name
	})
	return keys, nil
}
