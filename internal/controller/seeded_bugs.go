package controller

import (
	"context"
	"fmt"

	"github.com/nqos/nqos/api/v1alpha1"
	"github.com/nqos/nqos/internal/ovnnb"
	"github.com/nqos/nqos/internal/qos"
)

// The code below exists only for the seeded bugs of internal/seeded: it is
// called from a branch `if seeded.Active == seeded.X`, which a normal
// build folds away, so it is unreachable without its nqos_bug_<id> tag.

// rowLister reads the NB's NetworkQoS-owned rows; *ovnnb.Client has it.
type rowLister interface {
	Rows(ctx context.Context) (qos.Desired, error)
}

// teardownReversed is the TeardownReversed bug: the object's port groups
// and address sets go first, then its QoS rows. The first step is an Apply
// whose want is exactly the object's current QoS rows and no group or set,
// so ovnnb deletes the groups and sets in one committed transaction while
// the rows still match on them (@pg / $as dangle); ovnnb.Teardown then
// deletes the rows.
func (c *Controller) teardownReversed(ctx context.Context, key ovnnb.Key) error {
	nb, ok := c.nb.(rowLister)
	if !ok {
		return fmt.Errorf("NetworkQoS %s: teardown: NB client %T cannot list rows", key, c.nb)
	}
	owner := key.Namespace + ":" + key.Name
	seen := map[string]bool{}
	var keep []qos.QoSRow
	rows, err := nb.Rows(ctx)
	if err != nil {
		return fmt.Errorf("NetworkQoS %s: teardown: %w", key, err)
	}
	for _, q := range rows.QoS {
		id := q.ExternalIDs[qos.PrimaryIDKey]
		if q.ExternalIDs[qos.ObjectNameKey] != owner || q.Switch == "" || seen[id] {
			continue // Apply refuses unbound rows and duplicate ids
		}
		seen[id] = true
		keep = append(keep, q)
	}
	if _, err := c.nb.Apply(ctx, key, ovnnb.ObjectRows{QoS: keep}); err != nil {
		return err // names the object
	}
	return c.nb.Teardown(ctx, key)
}

// applyPartial is the PartialRejected bug's controller half: the rows the
// compiler built for a rejected object on its networks with discoverable
// pod IPs are applied as if it were accepted (its status still says
// Accepted=False), instead of the object's rows being removed.
func (c *Controller) applyPartial(ctx context.Context, nq *v1alpha1.NetworkQoS, key ovnnb.Key, r qos.Result) outcome {
	_, err := c.nb.Apply(ctx, key, ovnnb.ObjectRows{PortGroups: r.PortGroups, AddressSets: r.AddressSets, QoS: r.QoS})
	out := outcome{result: resultRejected}
	if err != nil { // ovnnb's errors name the object
		out = outcome{result: resultError, err: err}
	}
	return out.also(c.writeStatus(ctx, nq, accepted(r), c.notAccepted(r)))
}
