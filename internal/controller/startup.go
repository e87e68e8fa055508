package controller

import (
	"context"
	"errors"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/nqos/nqos/internal/ovnnb"
	"github.com/nqos/nqos/internal/qos"
)

// startup garbage-collects the rows of objects that no longer exist, then
// migrates legacy address-set source matches to port groups. A failed NB
// read or write is retried with backoff until ctx ends; until then the
// controller is not ready and NotReady names the last error.
func (c *Controller) startup(ctx context.Context) error {
	backoff := wait.Backoff{Duration: 100 * time.Millisecond, Factor: 2, Steps: 1 << 30, Cap: 10 * time.Second}
	for {
		err := c.collectOrphans(ctx)
		if err == nil {
			err = c.migrateLegacy(ctx)
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

// collectOrphans tears down every owner key without a NetworkQoS.
func (c *Controller) collectOrphans(ctx context.Context) error {
	keys, err := c.nb.OwnedKeys(ctx)
	if err != nil {
		return fmt.Errorf("garbage collection: %w", err)
	}
	var errs []error
	for _, k := range keys {
		key := k.Namespace + "/" + k.Name
		if _, ok := c.inf.networkQoS(key); ok {
			continue
		}
		c.log.Info("removing orphaned NB rows", "networkqos", key)
		if err := c.teardown(ctx, k); err != nil {
			errs = append(errs, err) // names the object
		}
	}
	return errors.Join(errs...)
}

// migrateLegacy rewrites each legacy row of an accepted object to match
// on the object's port group for the row's network. Rows of rejected or
// invalid objects are left to their reconcile, which tears them down.
func (c *Controller) migrateLegacy(ctx context.Context) error {
	rows, err := c.nb.LegacyRows(ctx)
	if err != nil {
		return fmt.Errorf("legacy migration: %w", err)
	}
	var errs []error
	for _, row := range rows {
		key := row.Key.Namespace + "/" + row.Key.Name
		nq, ok := c.inf.networkQoS(key)
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
		res, err := c.nb.MigrateLegacy(ctx, row, pg)
		if err != nil {
			errs = append(errs, err) // names the object and the row
			continue
		}
		c.log.Info("migrated legacy QoS row", "networkqos", key, "rule", row.RuleIndex, "portGroup", pg.Name, "result", fmt.Sprintf("%+v", res))
	}
	return errors.Join(errs...)
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
