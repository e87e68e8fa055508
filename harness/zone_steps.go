package harness

import (
	"context"
	"fmt"
	"strings"

	"github.com/nqos/nqos/harness/results"
	"github.com/nqos/nqos/harness/verdict"
	"github.com/nqos/nqos/internal/qos"
	"github.com/nqos/nqos/scenarios"
)

// ZoneControl is an environment with one controller per zone (OVN
// interconnect) whose controllers a step can stop and start one at a
// time, and whose aggregate status it can read (CapZones).
type ZoneControl interface {
	// StopZoneController stops the controller of node's zone
	// (scenarios.ControllerGraceful or ControllerKill9) and returns once
	// the process is gone; the other zones' controllers keep running.
	StopZoneController(ctx context.Context, node int, mode string) ([]results.Measure, error)
	// StartZoneController starts the stopped controller of node's zone
	// and waits until it is synced and every zone's rows equal the
	// compiler's rows for the cluster's objects; not converging in time
	// is a judged result (ZoneStart's differences), not an error.
	StartZoneController(ctx context.Context, node int) (ZoneStart, error)
	// AggregateStatus is a NetworkQoS's status.status ("" when unset;
	// a failed read is an error).
	AggregateStatus(ctx context.Context, namespace, name string) (string, error)
}

// ZoneStart is what starting a zone's controller measured.
type ZoneStart struct {
	Measures []results.Measure
	Divergence
}

func (ex *execution) stopZoneController(ctx context.Context, _ int, st *scenarios.Step, zc ZoneControl) error {
	s := st.StopZoneController
	m, err := zc.StopZoneController(ctx, s.Node, s.Mode)
	if err != nil {
		return fmt.Errorf("stop the controller of node %d's zone: %w", s.Node, err)
	}
	ex.measures = m
	return nil
}

func (ex *execution) startZoneController(ctx context.Context, _ int, st *scenarios.Step, zc ZoneControl) error {
	s := st.StartZoneController
	res, err := zc.StartZoneController(ctx, s.Node)
	if err != nil {
		return fmt.Errorf("start the controller of node %d's zone: %w", s.Node, err)
	}
	ex.measures = res.Measures
	var mism verdict.Mismatches
	res.judge(&mism, "the zone's controller")
	return failure(mism, "")
}

// aggregate checks an object's status.status against the texts it must
// contain.
func (ex *execution) aggregate(ctx context.Context, oc *scenarios.ObjectCheck) ([]string, error) {
	zc, err := capable[ZoneControl](ex, CapZones)
	if err != nil {
		return nil, err
	}
	m := oc.Object
	got, err := zc.AggregateStatus(ctx, m.Namespace, m.Name)
	if err != nil {
		return nil, fmt.Errorf("read the aggregate status of %s: %w", m.Key(), err)
	}
	var out []string
	for _, s := range oc.Aggregate.Contains {
		if !strings.Contains(got, s) {
			out = append(out, fmt.Sprintf("%s status.status %q does not contain %q", m.Key(), got, s))
		}
	}
	return out, nil
}

func (kindTable) StopZoneController() stepKind {
	return capKind("stopZoneController", CapZones, (*execution).stopZoneController)
}

func (kindTable) StartZoneController() stepKind {
	return capKind("startZoneController", CapZones, (*execution).startZoneController)
}

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
