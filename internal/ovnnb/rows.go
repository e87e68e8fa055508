package ovnnb

import (
	"context"
	"fmt"
	"maps"
	"sort"

	"github.com/nqos/nqos/internal/qos"
)

// Rows returns every NetworkQoS-owned row in the compiler's vocabulary:
// port-group ports as LSP names, each QoS row once per switch referencing
// it (Switch "" when none does). Port groups and address sets are sorted
// by name, QoS rows by switch, then k8s.ovn.org/id, then match.
// NetworkQoS and Warnings stay empty. A failed read is an error, never
// an empty result.
func (c *Client) Rows(ctx context.Context) (qos.Desired, error) {
	out := qos.Desired{NetworkQoS: []qos.ObjectStatus{}, PortGroups: []qos.PortGroup{},
		AddressSets: []qos.AddressSet{}, QoS: []qos.QoSRow{}, Warnings: []string{}}
	rs, sw, err := c.ownedView(ctx)
	if err != nil {
		return qos.Desired{}, fmt.Errorf("read NB rows: %w", err)
	}
	names, err := c.lspNames(ctx)
	if err != nil {
		return qos.Desired{}, fmt.Errorf("read NB rows: %w", err)
	}
	for _, pg := range rs.pgs {
		ports := make([]string, 0, len(pg.Ports))
		for _, u := range pg.Ports {
			ports = append(ports, names[u])
		}
		out.PortGroups = append(out.PortGroups, qos.PortGroup{Name: pg.Name, Ports: sortedSet(ports), ExternalIDs: maps.Clone(pg.ExternalIDs)})
	}
	for _, as := range rs.ases {
		out.AddressSets = append(out.AddressSets, qos.AddressSet{Name: as.Name, Addresses: sortedSet(as.Addresses), ExternalIDs: maps.Clone(as.ExternalIDs)})
	}
	for _, q := range rs.qos {
		switches := sw.refs[q.UUID]
		if len(switches) == 0 {
			switches = []string{""}
		}
		for _, s := range switches {
			out.QoS = append(out.QoS, fromNBQoS(q, s))
		}
	}
	sortQoS(out.QoS)
	return out, nil
}

func sortQoS(rows []qos.QoSRow) {
	sort.SliceStable(rows, func(i, j int) bool {
		a, b := rows[i], rows[j]
		if a.Switch != b.Switch {
			return a.Switch < b.Switch
		}
		if ia, ib := a.ExternalIDs[qos.PrimaryIDKey], b.ExternalIDs[qos.PrimaryIDKey]; ia != ib {
			return ia < ib
		}
		return a.Match < b.Match
	})
}
