package harness

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/nqos/nqos/flow"
	"github.com/nqos/nqos/harness/results"
	"github.com/nqos/nqos/internal/tc"
	"github.com/nqos/nqos/scenarios"
)

// Fabric is the environment side of the egress, trustBoundary and
// measure steps: traffic control on the testbed's links, an untrusted
// fabric edge and captures where flows are delivered. An environment
// without it fails those steps.
type Fabric interface {
	// ShapeEgress installs h on the port's egress, replacing what is
	// there; nil removes it.
	ShapeEgress(ctx context.Context, p scenarios.Port, h *tc.HTB) error
	// EgressStats reads the counters of the classes installed on a port.
	EgressStats(ctx context.Context, p scenarios.Port) ([]tc.ClassStats, error)
	// SetTrustBoundary makes the fabric rewrite DSCP to 0 on packets
	// entering from node's uplink (untrusted) or trust it again.
	SetTrustBoundary(ctx context.Context, node int, untrusted bool) error
	// WatchDelivery starts a capture at each destination (a VM's NIC or
	// a host's port) into pcap(dest) and returns once each is ready.
	WatchDelivery(ctx context.Context, dests []string, pcap func(dest string) string) (Delivery, error)
	// ClearFabric removes every hierarchy and trust boundary still
	// installed.
	ClearFabric(ctx context.Context) error
}

// Delivery is the running captures of a measure step.
type Delivery interface {
	// Finish stops the captures and returns, by flow spec name, what
	// each destination received of the specs sent to it.
	Finish(ctx context.Context, specs map[string][]flow.Spec) (map[string]Measured, error)
}

// fabricState is what the fabric steps of a scenario keep: the ports
// shaped now and the delivered rate of every measured run.
type fabricState struct {
	shaped    []scenarios.Port
	delivered map[string]float64 // by run name: steady delivered bit/s
	table     int                // index+1 of the delivered table in the results
}

// fabricKind is the step kind of a fabric step.
func fabricKind(run func(*execution, context.Context, int, *scenarios.Step) error, summary func(*scenarios.Step) string) stepKind {
	return stepKind{summary: summary, run: func(ctx context.Context, ex *execution, i int, st *scenarios.Step) error { return run(ex, ctx, i, st) }}
}

func (ex *execution) fabric() (Fabric, error) {
	f, ok := ex.env.(Fabric)
	if !ok {
		return nil, errors.New("the environment has no fabric to shape, rewrite or capture at")
	}
	return f, nil
}

func portName(p scenarios.Port) string {
	if p.Uplink != nil {
		return fmt.Sprintf("node %d uplink", *p.Uplink)
	}
	return "fabric port to " + p.Host
}

func (ex *execution) egress(ctx context.Context, _ int, st *scenarios.Step) error {
	fab, err := ex.fabric()
	if err != nil {
		return err
	}
	e := st.Egress
	var h *tc.HTB
	if !e.Clear {
		hh, err := e.HTB()
		if err != nil {
			return fmt.Errorf("egress on %s: %w", portName(e.Port), err)
		}
		h = &hh
	}
	if err := fab.ShapeEgress(ctx, e.Port, h); err != nil {
		return err
	}
	var kept []scenarios.Port
	for _, p := range ex.fab.shaped {
		if !scenarios.SamePort(p, e.Port) {
			kept = append(kept, p)
		}
	}
	if h != nil {
		kept = append(kept, e.Port)
	}
	ex.fab.shaped = kept
	return nil
}

func egressSummary(st *scenarios.Step) string {
	e := st.Egress
	if e.Clear {
		return "remove HTB from " + portName(e.Port)
	}
	var cs []string
	for _, c := range e.Classes {
		sel := "default"
		switch {
		case len(c.Dst) > 0:
			sel = "dst " + strings.Join(c.Dst, ",")
		case len(c.DSCP) > 0:
			sel = fmt.Sprintf("dscp %v", c.DSCP)
		}
		cs = append(cs, fmt.Sprintf("%s %s prio %d (%s)", c.Name, c.Rate, c.Prio, sel))
	}
	return fmt.Sprintf("HTB on %s: ceil %s; %s", portName(e.Port), e.Ceil, strings.Join(cs, "; "))
}

func (ex *execution) trustBoundary(ctx context.Context, _ int, st *scenarios.Step) error {
	fab, err := ex.fabric()
	if err != nil {
		return err
	}
	return fab.SetTrustBoundary(ctx, st.TrustBoundary.Uplink, !st.TrustBoundary.Clear)
}

func trustSummary(st *scenarios.Step) string {
	if st.TrustBoundary.Clear {
		return fmt.Sprintf("fabric trusts node %d's uplink again", st.TrustBoundary.Uplink)
	}
	return fmt.Sprintf("fabric rewrites DSCP to 0 on packets from node %d's uplink", st.TrustBoundary.Uplink)
}

// clearFabric removes what the fabric steps left installed, whatever
// the scenario's outcome.
func (ex *execution) clearFabric(ctx context.Context) error {
	fab, ok := ex.env.(Fabric)
	if !ok {
		return nil
	}
	ex.fab.shaped = nil
	if err := fab.ClearFabric(context.WithoutCancel(ctx)); err != nil {
		return fmt.Errorf("remove the fabric's shaping and trust boundaries: %w", err)
	}
	return nil
}

// classCounts are the counters of every shaped port's classes, by
// "<port> class <name>".
func (ex *execution) classCounts(ctx context.Context, fab Fabric) (map[string]tc.ClassStats, error) {
	out := map[string]tc.ClassStats{}
	for _, p := range ex.fab.shaped {
		stats, err := fab.EgressStats(ctx, p)
		if err != nil {
			return nil, err
		}
		for _, s := range stats {
			out[classKey(p, s.Name)] = s
		}
	}
	return out, nil
}

func classKey(p scenarios.Port, class string) string { return portName(p) + " class " + class }

// classDeltas are what each class sent and dropped between two readings,
// as the step's measures, sorted.
func classDeltas(before, after map[string]tc.ClassStats) ([]results.Measure, map[string]tc.ClassStats) {
	delta := map[string]tc.ClassStats{}
	var out []results.Measure
	for _, k := range slices.Sorted(maps.Keys(after)) {
		a, b := after[k], before[k]
		d := tc.ClassStats{Name: a.Name, Packets: a.Packets - b.Packets, Drops: a.Drops - b.Drops}
		delta[k] = d
		out = append(out, results.Measure{Name: k + " sent", Count: int(d.Packets), Unit: "packets"},
			results.Measure{Name: k + " dropped", Count: int(d.Drops), Unit: "packets"})
	}
	return out, delta
}
