package ovnnb

import (
	"context"
	"fmt"
	"maps"
	"sort"
	"strings"

	"github.com/ovn-kubernetes/libovsdb/model"
	"github.com/ovn-kubernetes/libovsdb/ovsdb"

	"github.com/nqos/nqos/internal/ovnnb/nbdb"
	"github.com/nqos/nqos/internal/qos"
)

// ForeignRow is a NetworkQoS QoS row nqos does not own, bound to a switch.
type ForeignRow struct {
	UUID, Switch string
	// Controller is the row's k8s.ovn.org/owner-controller, Object its
	// k8s.ovn.org/name ("<ns>:<name>"), ID its k8s.ovn.org/id.
	Controller, Object, ID string
	Priority               int
	Match                  string
}

// String names the row for logs, events and conditions.
func (f ForeignRow) String() string {
	return fmt.Sprintf("QoS %s of %s (%s, priority %d) on switch %s", f.ID, f.Controller, f.Object, f.Priority, f.Switch)
}

// ForeignNetworkQoS lists the NetworkQoS QoS rows nqos does not own
// (OVN-Kubernetes's own NetworkQoS controller's among them) bound to any
// of switches (every switch when switches is nil), sorted by switch,
// priority and UUID. nqos reports them and never changes them. A failed
// read is an error, never an empty list.
func (c *Client) ForeignNetworkQoS(ctx context.Context, switches []string) ([]ForeignRow, error) {
	ctx, cancel := context.WithTimeout(ctx, readTimeout)
	defer cancel()
	var qs []nbdb.QoS
	if err := c.cli.WhereCache(func(q *nbdb.QoS) bool { return IsForeignNetworkQoS(q.ExternalIDs) }).List(ctx, &qs); err != nil {
		return nil, fmt.Errorf("list foreign NetworkQoS rows: %w", err)
	}
	sw, err := c.switchIndex(ctx)
	if err != nil {
		return nil, fmt.Errorf("list foreign NetworkQoS rows: %w", err)
	}
	return foreignRows(qs, sw, switches), nil
}

// foreignRows is ForeignNetworkQoS over rows already read.
func foreignRows(qs []nbdb.QoS, sw switchIndex, switches []string) []ForeignRow {
	want := map[string]bool{}
	for _, s := range switches {
		want[s] = true
	}
	out := []ForeignRow{}
	for _, q := range qs {
		for _, s := range sw.refs[q.UUID] {
			if switches != nil && !want[s] {
				continue
			}
			out = append(out, ForeignRow{UUID: q.UUID, Switch: s, Controller: q.ExternalIDs[qos.OwnerControllerKey],
				Object: q.ExternalIDs[qos.ObjectNameKey], ID: q.ExternalIDs[qos.PrimaryIDKey], Priority: q.Priority, Match: q.Match})
		}
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i], out[j]
		return qos.CompareOnSwitch(a.Switch, a.Priority, a.UUID, b.Switch, b.Priority, b.UUID) < 0
	})
	return out
}

// AdoptResult counts the rows AdoptEarlierRows re-keyed.
type AdoptResult struct {
	QoS, PortGroups, AddressSets int
	// Transactions is how many transactions were committed.
	Transactions int
}

// Total is the number of rows re-keyed.
func (r AdoptResult) Total() int { return r.QoS + r.PortGroups + r.AddressSets }

// maxAdoptOps bounds one adoption transaction.
const maxAdoptOps = 2000

// AdoptEarlierRows moves the rows an earlier nqos version wrote under
// OVN-Kubernetes's controller name ("<network>-network-controller") to
// nqos's own key, in place: only the owner-controller and the controller
// field of k8s.ovn.org/id change (names, matches and bindings are kept;
// the next Apply of the object moves them to its own names in one
// transaction, and the startup GC and legacy migration treat them as
// nqos's from then on).
//
// Which earlier-key rows are nqos's: its port groups always (OVN-
// Kubernetes's NetworkQoS controller creates none) and the QoS rows whose
// match selects the source by port group ("inport == @..."); with
// ovnkubeOff (OVN-Kubernetes's NetworkQoS controller does not run in the
// cluster) every earlier-key NetworkQoS row of a user-defined network:
// its address-set-source QoS rows and its address sets, left behind by
// OVN-Kubernetes or by nqos, are adopted so nqos upgrades them. While
// OVN-Kubernetes's NetworkQoS runs those rows are its own (nqos's
// earlier destination address sets had the very same names) and stay
// untouched. Rows of the default network's controller are never adopted.
func (c *Client) AdoptEarlierRows(ctx context.Context, ovnkubeOff bool) (AdoptResult, error) {
	var res AdoptResult
	rctx, cancel := context.WithTimeout(ctx, readTimeout)
	rs, err := c.listOwned(rctx, func(ext map[string]string) bool { return ClassifyOwner(ext) == OwnerEarlierKey })
	cancel()
	if err != nil {
		return res, fmt.Errorf("adopt rows of earlier nqos versions: %w", err)
	}
	var ms []model.Model
	var fields [][]any
	add := func(m model.Model, ext *map[string]string) {
		*ext = rekeyed(*ext)
		ms, fields = append(ms, m), append(fields, []any{ext})
	}
	for i := range rs.pgs {
		pg := &nbdb.PortGroup{UUID: rs.pgs[i].UUID, ExternalIDs: rs.pgs[i].ExternalIDs}
		add(pg, &pg.ExternalIDs)
		res.PortGroups++
	}
	for i := range rs.qos {
		if !ovnkubeOff && !strings.HasPrefix(rs.qos[i].Match, "inport == @") {
			continue
		}
		q := &nbdb.QoS{UUID: rs.qos[i].UUID, ExternalIDs: rs.qos[i].ExternalIDs}
		add(q, &q.ExternalIDs)
		res.QoS++
	}
	for i := range rs.ases {
		if !ovnkubeOff {
			break
		}
		as := &nbdb.AddressSet{UUID: rs.ases[i].UUID, ExternalIDs: rs.ases[i].ExternalIDs}
		add(as, &as.ExternalIDs)
		res.AddressSets++
	}
	for start := 0; start < len(ms); start += maxAdoptOps {
		end := min(start+maxAdoptOps, len(ms))
		if err := c.rekey(ctx, ms[start:end], fields[start:end]); err != nil {
			return res, fmt.Errorf("adopt rows of earlier nqos versions: %w", err)
		}
		res.Transactions++
	}
	return res, nil
}

// rekey updates the external_ids of ms in one transaction and waits until
// the cache shows them (commit waits for inserts and deletes only).
func (c *Client) rekey(ctx context.Context, ms []model.Model, fields [][]any) error {
	var ops []ovsdb.Operation
	want := map[string]map[string]string{}
	for i, m := range ms {
		o, err := c.cli.Where(m).Update(m, fields[i]...)
		if err != nil {
			return fmt.Errorf("update external_ids: %w", err)
		}
		ops = append(ops, o...)
		uuid, ext := rowOf(m)
		want[uuid] = ext
	}
	if err := c.commit(ctx, ops); err != nil {
		return err
	}
	wctx, cancel := context.WithTimeout(ctx, commitTimeout)
	defer cancel()
	return c.waitFor(wctx, "re-keyed rows", func() bool {
		for _, m := range ms {
			cur := model.Clone(m)
			found, err := c.get(wctx, cur)
			switch {
			case err != nil:
				return false
			case !found:
				continue // deleted meanwhile: nothing to wait for
			}
			_, ext := rowOf(cur)
			if uuid, _ := rowOf(m); !maps.Equal(ext, want[uuid]) {
				return false
			}
		}
		return true
	})
}

// rowOf is the UUID and external_ids of a QoS, Port_Group or
// Address_Set model.
func rowOf(m model.Model) (uuid string, ext map[string]string) {
	switch r := m.(type) {
	case *nbdb.QoS:
		return r.UUID, r.ExternalIDs
	case *nbdb.PortGroup:
		return r.UUID, r.ExternalIDs
	case *nbdb.AddressSet:
		return r.UUID, r.ExternalIDs
	}
	panic(fmt.Sprintf("ovnnb: %T is not a QoS, Port_Group or Address_Set", m))
}
