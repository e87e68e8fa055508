package controller

import (
	"context"
	"errors"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/nqos/nqos/internal/ovnnb"
	"github.com/nqos/nqos/internal/qos"
	"github.com/nqos/nqos/internal/seeded"
)

// startup runs the startup sync: it garbage-collects the rows of objects
// that no longer exist, migrates legacy address-set source matches to port
// groups, then writes every accepted object's rows, each step in a few
// bounded NB transactions (ovnnb's batches). A failed NB read or write is
// retried with backoff until ctx ends; until then the controller is not
// ready and NotReady names the last error.
func (c *Controller) startup(ctx context.Context) error {
	backoff := wait.Backoff{Duration: 100 * time.Millisecond, Factor: 2, Steps: 1 << 30, Cap: 10 * time.Second}
	for {
		err := c.collectOrphans(ctx)
		if err == nil {
			err = c.migrateLegacy(ctx)
		}
		if err == nil {
			err = c.initialSync(ctx)
		}
		if err == nil {
			return nil
		}
		c.setNotReady(fmt.Errorf("startup NB sync failed, retrying: %w", err))
		c.log.Error("startup sync failed, retrying", "err", err)
		select {
		case <-ctx.Done():
			return fmt.Errorf("controller: startup: %w (last: %w)", ctx.Err(), err)
		case <-time.After(backoff.Step()):
		}
	}
}

// collectOrphans tears down every owner key without a NetworkQoS, QoS
// rows before port groups and address sets in each batch.
func (c *Controller) collectOrphans(ctx context.Context) error {
	keys, err := c.nb.OwnedKeys(ctx)
	if err != nil {
		return fmt.Errorf("garbage collection: %w", err)
	}
	var orphans []ovnnb.Key
	for _, k := range keys {
		if _, ok := c.inf.networkQoS(k.String()); !ok {
			orphans = append(orphans, k)
		}
	}
	if len(orphans) == 0 {
		return nil
	}
	c.log.Info("removing orphaned NB rows", "objects", len(orphans), "first", orphans[0].String())
	if seeded.Active == seeded.TeardownReversed {
		var errs []error
		for _, k := range orphans {
			errs = append(errs, c.teardown(ctx, k)) // seeded bug: one object at a time, reversed
		}
		return errors.Join(errs...)
	}
	n, err := c.nb.TeardownBatch(ctx, orphans)
	c.metrics.nbWrites.Add(float64(n))
	if err != nil {
		return fmt.Errorf("garbage collection: %w", err) // names the objects
	}
	return nil
}

// migrateLegacy rewrites each legacy row of an accepted object to match
// on the object's port group for the row's network. Rows of rejected or
// invalid objects are left to their reconcile, which tears them down.
func (c *Controller) migrateLegacy(ctx context.Context) error {
	rows, err := c.nb.LegacyRows(ctx)
	if err != nil {
		return fmt.Errorf("legacy migration: %w", err)
	}
	var ms []ovnnb.Migration
	for _, row := range rows {
		nq, ok := c.inf.networkQoS(row.Key.String())
		if !ok {
			continue
		}
		r := qos.CompileObject(nq, c.facts, c.node)
		if r.Err != nil || r.Accepted.Status != conditionTrue {
			continue
		}
		pg, ok := portGroupForSwitches(r, row.Switches)
		if !ok {
			continue // the object no longer selects this switch: reconcile deletes the row
		}
		ms = append(ms, ovnnb.Migration{Row: row, PortGroup: pg})
	}
	if len(ms) == 0 {
		return nil
	}
	res, err := c.nb.MigrateLegacyBatch(ctx, ms)
	c.metrics.nbWrites.Add(float64(res.Transactions))
	if err != nil {
		return fmt.Errorf("legacy migration: %w", err)
	}
	var errs []error
	for _, m := range ms {
		if err := res.Failed[m.Row.UUID]; err != nil {
			errs = append(errs, err) // names the object and the row
			continue
		}
		c.log.Info("migrated legacy QoS row", "networkqos", m.Row.Key.String(), "rule", m.Row.RuleIndex,
			"portGroup", m.PortGroup.Name, "result", fmt.Sprintf("%+v", res.Results[m.Row.UUID]))
	}
	return errors.Join(errs...)
}

// initialSync writes the rows of every accepted object in a few bounded
// transactions. Rejected and invalid objects, and objects that cannot be
// planned now (a missing switch, a foreign row in the way), are left to
// their reconcile: every object is queued once startup is done, and its
// reconcile writes its status (an object already synced here commits no
// further transaction).
func (c *Controller) initialSync(ctx context.Context) error {
	var objs []ovnnb.KeyedRows
	for _, key := range c.inf.networkQoSKeys() {
		nq, ok := c.inf.networkQoS(key)
		if !ok {
			continue
		}
		r := qos.CompileObject(nq, c.facts, c.node)
		if r.Err != nil || r.Accepted.Status != conditionTrue {
			continue
		}
		objs = append(objs, ovnnb.KeyedRows{Key: ovnnb.Key{Namespace: nq.Namespace, Name: nq.Name},
			Rows: ovnnb.ObjectRows{PortGroups: r.PortGroups, AddressSets: r.AddressSets, QoS: r.QoS}})
	}
	if len(objs) == 0 {
		return nil
	}
	res, err := c.nb.ApplyBatch(ctx, objs)
	c.metrics.nbWrites.Add(float64(res.Transactions))
	if err != nil {
		return fmt.Errorf("initial NB sync: %w", err)
	}
	for key, err := range res.Failed {
		c.log.Info("initial NB sync left an object to its reconcile", "networkqos", key.String(), "err", err)
	}
	c.log.Info("initial NB sync", "objects", len(objs), "transactions", res.Transactions, "leftToReconcile", len(res.Failed))
	return nil
}

// portGroupForSwitches finds the object's port group for the network
// whose switch the legacy row is bound to.
func portGroupForSwitches(r qos.Result, switches []string) (qos.PortGroup, bool) {
	for _, n := range r.Networks {
		for _, sw := range switches {
			if n.Switch != sw {
				continue
			}
			for _, pg := range r.PortGroups {
				if pg.ExternalIDs[qos.OwnerControllerKey] == qos.ControllerName(n.Name) {
					return pg, true
				}
			}
		}
	}
	return qos.PortGroup{}, false
}

var _ NB = (*ovnnb.Client)(nil)
