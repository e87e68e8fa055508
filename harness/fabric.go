package harness

import (
	"context"
	"fmt"
	"maps"
	"slices"

	"github.com/nqos/nqos/flow"
	"github.com/nqos/nqos/harness/results"
	"github.com/nqos/nqos/internal/tc"
	"github.com/nqos/nqos/scenarios"
)

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

func (ex *execution) fabric() (Fabric, error) { return capable[Fabric](ex, CapFabric) }

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
			return fmt.Errorf("egress on %s: %w", e.Port.Name(), err)
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

func classKey(p scenarios.Port, class string) string { return p.Name() + " class " + class }

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

func (kindTable) Egress() stepKind {
	return stepKind{name: "egress", run: (*execution).egress, needs: []Capability{CapFabric}}
}

func (kindTable) TrustBoundary() stepKind {
	return stepKind{name: "trustBoundary", run: func(ex *execution, ctx context.Context, _ int, st *scenarios.Step) error {
		fab, err := ex.fabric()
		if err != nil {
			return err
		}
		return fab.SetTrustBoundary(ctx, st.TrustBoundary.Uplink, !st.TrustBoundary.Clear)
	}, needs: []Capability{CapFabric}}
}
