package harness

import (
	"context"

	"github.com/nqos/nqos/harness/results"
	"github.com/nqos/nqos/internal/qos"
)

// Zoned is an environment whose OVN control plane is split into zones
// (OVN interconnect: one NB per node). Its NB row checks (rows:,
// noOwnedRows:) run in every zone: a zone's port groups hold exactly the
// expected ports that zone's NB has, and every zone holds every expected
// QoS row and address set.
type Zoned interface {
	// ZoneRows returns each zone's NetworkQoS-owned rows and logical
	// switch ports, in zone order; a failed read is an error.
	ZoneRows(ctx context.Context) ([]ZoneRows, error)
	// Topology names the control-plane layout ("central",
	// "interconnect"); Zones describes each zone for the report.
	Topology() string
	Zones() []results.Zone
}

// ZoneRows is one zone's rows and the logical switch ports of its NB.
type ZoneRows struct {
	Zone  string
	Nodes []string
	Rows  qos.Desired
	Ports []string
}

// zoneRows are the rows the checks evaluate: each zone's where the
// environment is Zoned, else one unnamed zone with every row and no port
// filter (nil Ports).
func (ex *execution) zoneRows(ctx context.Context) ([]ZoneRows, error) {
	if z, ok := ex.env.(Zoned); ok {
		return z.ZoneRows(ctx)
	}
	rows, err := ex.env.Rows(ctx)
	if err != nil {
		return nil, err
	}
	return []ZoneRows{{Rows: rows}}, nil
}

// prefix is "zone <name>: " for a named zone of several, else "".
func (z ZoneRows) prefix(n int) string {
	if n < 2 || z.Zone == "" {
		return ""
	}
	return "zone " + z.Zone + ": "
}

// recordZones puts the environment's topology and zones into the
// scenario's result.
func (ex *execution) recordZones() {
	if z, ok := ex.env.(Zoned); ok {
		ex.res.Topology, ex.res.Zones = z.Topology(), z.Zones()
	}
}
