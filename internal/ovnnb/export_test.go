package ovnnb

import (
	"context"

	"github.com/ovn-kubernetes/libovsdb/ovsdb"
)

// Commit exposes commit to the external tests.
func (c *Client) Commit(ctx context.Context, ops []ovsdb.Operation) error { return c.commit(ctx, ops) }
