package controller

import (
	"context"
	"errors"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/nqos/nqos/api/v1alpha1"
	"github.com/nqos/nqos/internal/ovnnb"
	"github.com/nqos/nqos/internal/qos"
	"github.com/nqos/nqos/internal/seeded"
)

// startup runs the startup sync: it adopts the rows earlier nqos versions
// wrote under OVN-Kubernetes's controller name (adoptEarlier),
// garbage-collects the rows of objects that no longer exist, migrates
// legacy address-set source matches to port groups, then writes every accepted object's rows, each step in a few
// bounded NB transactions (ovnnb's batches), every object compiled once
// per attempt. A failed NB read or write is retried with backoff until
// ctx ends; until then the controller is not ready and NotReady names the
// last error. It returns the keys of the objects whose rows the sync
// wrote (or found) as the compiler wants them.
func (c *Controller) startup(ctx context.Context) (map[string]bool, error) {
	backoff := wait.Backoff{Duration: 100 * time.Millisecond, Factor: 2, Steps: 1 << 30, Cap: 10 * time.Second}
	for {
		synced, err := c.startupOnce(ctx)
		if err == nil {
			return synced, nil
		}
		c.metrics.nbFailed(err)
		if errors.Is(err, ovnnb.ErrFenced) {
			return nil, fmt.Errorf("controller: startup: %w", err) // another leader took over
		}
		c.readiness.set(fmt.Errorf("startup NB sync failed, retrying: %w", err))
		c.log.Error("startup sync failed, retrying", "err", err)
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("controller: startup: %w (last: %w)", ctx.Err(), err)
		case <-time.After(backoff.Step()):
		}
	}
}

// startupOnce is one attempt of the startup sync.
func (c *Controller) startupOnce(ctx context.Context) (map[string]bool, error) {
	start := time.Now()
	if c.fence != "" && !c.fenceTaken {
		// Once per run: a retry must not take the fence back from a
		// leader that took it since.
		if err := c.nb.TakeFence(ctx, c.fence); err != nil {
			return nil, err // names the fence row
		}
		c.fenceTaken = true
		c.log.Info("took the Northbound leader fence", "holder", c.fence)
	}
	if err := c.adoptEarlier(ctx); err != nil {
		return nil, err
	}
	if err := c.collectOrphans(ctx); err != nil {
		return nil, err
	}
	view := c.remoteView()
	rs, err := c.startupRemotePods(ctx, c.compileAll(), view)
	if err != nil {
		return nil, err
	}
	if err := c.migrateLegacy(ctx, rs); err != nil {
		return nil, err
	}
	synced, err := c.initialSync(ctx, rs)
	if err != nil {
		return nil, err
	}
	if err := c.logForeign(ctx, rs); err != nil {
		return nil, err
	}
	c.log.Info("startup NB sync done", "objects", len(rs), "synced", len(synced), "took", time.Since(start))
	return synced, nil
}

// compileAll compiles every cached NetworkQoS, in key order, against one
// view of the caches (each NAD config parsed once).
func (c *Controller) compileAll() []qos.Result {
	keys := c.inf.networkQoSKeys()
	nqs := make([]*v1alpha1.NetworkQoS, 0, len(keys))
	for _, key := range keys {
		if nq, ok := c.inf.networkQoS(key); ok {
			nqs = append(nqs, nq)
		}
	}
	return qos.CompileObjectsWith(nqs, c.facts, c.compileOptions())
}

// acceptedRows is whether r is an accepted object with rows to write.
func acceptedRows(r qos.Result) bool { return r.Err == nil && r.Accepted.Status == conditionTrue }

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
func (c *Controller) migrateLegacy(ctx context.Context, rs []qos.Result) error {
	rows, err := c.nb.LegacyRows(ctx)
	if err != nil {
		return fmt.Errorf("legacy migration: %w", err)
	}
	if len(rows) == 0 {
		return nil
	}
	byKey := make(map[string]qos.Result, len(rs))
	for _, r := range rs {
		byKey[r.Key()] = r
	}
	var ms []ovnnb.Migration
	for _, row := range rows {
		r, ok := byKey[row.Key.String()]
		if !ok || !acceptedRows(r) {
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
// transactions and returns the keys of the objects it synced (written,
// or found as wanted; missing ports are left out as a reconcile leaves
// them). Rejected and invalid objects, and objects that cannot be planned
// now (a missing switch, a foreign row in the way), are left to their
// reconcile: every object is queued once startup is done, and its
// reconcile writes its status (an object already synced here commits no
// further transaction).
func (c *Controller) initialSync(ctx context.Context, rs []qos.Result) (map[string]bool, error) {
	var objs []ovnnb.KeyedRows
	for _, r := range rs {
		if !acceptedRows(r) {
			continue
		}
		objs = append(objs, ovnnb.KeyedRows{Key: ovnnb.Key{Namespace: r.Namespace, Name: r.Name},
			Rows: ovnnb.ObjectRows{PortGroups: r.PortGroups, AddressSets: r.AddressSets, QoS: r.QoS}})
	}
	synced := map[string]bool{}
	if len(objs) == 0 {
		return synced, nil
	}
	res, err := c.nb.ApplyBatch(ctx, objs)
	c.metrics.nbWrites.Add(float64(res.Transactions))
	if err != nil {
		return nil, fmt.Errorf("initial NB sync: %w", err)
	}
	for key, err := range res.Failed {
		c.log.Info("initial NB sync left an object to its reconcile", "networkqos", key.String(), "err", err)
	}
	for _, o := range objs {
		if res.Failed[o.Key] == nil {
			synced[o.Key.String()] = true
		}
	}
	c.log.Info("initial NB sync", "objects", len(objs), "transactions", res.Transactions, "leftToReconcile", len(res.Failed))
	return synced, nil
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
