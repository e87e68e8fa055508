package inspect

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/nqos/nqos/internal/audit"
	"github.com/nqos/nqos/internal/ovnnb"
	"github.com/nqos/nqos/internal/qos"
)

// nbReadTimeout bounds the connection to one Northbound and its reads.
const nbReadTimeout = 20 * time.Second

// NBZone is one zone's Northbound: its address and the zone it serves.
type NBZone struct {
	Zone audit.Zone
	Addr string
}

// ReadNB reads what one Northbound holds: the rows carrying nqos's
// ownership key (ovnnb's reading) and the QoS rows of every other writer
// bound to a switch, NetworkQoS rows of other controllers (ovnnb's
// ForeignNetworkQoS) and rows without NetworkQoS ownership. A failed
// connection or read is an error, never an empty result.
func ReadNB(ctx context.Context, addr string, opts ovnnb.Options) (audit.Actual, error) {
	ctx, cancel := context.WithTimeout(ctx, nbReadTimeout)
	defer cancel()
	nb, err := ovnnb.DialWith(ctx, addr, opts, nil)
	if err != nil {
		return audit.Actual{}, err
	}
	defer nb.Close()
	owned, err := nb.Rows(ctx)
	if err != nil {
		return audit.Actual{}, fmt.Errorf("NB %s: %w", addr, err)
	}
	foreign, err := nb.ForeignNetworkQoS(ctx, nil)
	if err != nil {
		return audit.Actual{}, fmt.Errorf("NB %s: %w", addr, err)
	}
	tables, err := nb.Tables(ctx)
	if err != nil {
		return audit.Actual{}, fmt.Errorf("NB %s: %w", addr, err)
	}
	ports, err := nb.PortNames(ctx)
	if err != nil {
		return audit.Actual{}, fmt.Errorf("NB %s: %w", addr, err)
	}
	got := audit.Actual{Owned: owned, Ports: ports}
	for _, f := range foreign {
		got.Foreign = append(got.Foreign, audit.Foreign{UUID: f.UUID, Switch: f.Switch, Priority: f.Priority, Match: f.Match,
			Owner: "NetworkQoS controller " + f.Controller + " (" + f.Object + ")", ID: f.ID})
	}
	return withUnowned(got, tables), nil
}

// withUnowned adds the QoS rows that carry no NetworkQoS ownership at all
// (ovnnb.OwnerOther: an ovn-nbctl qos-add, another tool), one per switch
// referencing them.
func withUnowned(got audit.Actual, t ovnnb.Tables) audit.Actual {
	refs := map[string][]string{}
	for _, ls := range t.Switches {
		for _, q := range ls.QOSRules {
			refs[q] = append(refs[q], ls.Name)
		}
	}
	for _, q := range t.QoS {
		if ovnnb.ClassifyOwner(q.ExternalIDs) != ovnnb.OwnerOther {
			continue
		}
		sws := slices.Clone(refs[q.UUID])
		slices.Sort(sws)
		for _, sw := range sws {
			got.Foreign = append(got.Foreign, audit.Foreign{UUID: q.UUID, Switch: sw, Priority: q.Priority, Match: q.Match, Owner: ownerText(q.ExternalIDs)})
		}
	}
	return got
}

// ownerText names the writer of a row without NetworkQoS ownership.
func ownerText(ext map[string]string) string {
	if c := ext[qos.OwnerControllerKey]; c != "" {
		return c + " (" + ext[qos.OwnerTypeKey] + ")"
	}
	return "a writer without owner external_ids"
}

// inNamespace keeps the owned rows of the objects of namespace ns ("":
// every row).
func inNamespace(d qos.Desired, ns string) qos.Desired {
	if ns == "" {
		return d
	}
	return d.Keep(func(ext map[string]string) bool { return strings.HasPrefix(ext[qos.ObjectNameKey], ns+":") })
}
