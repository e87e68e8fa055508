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
	"github.com/nqos/nqos/harness/verdict"
	"github.com/nqos/nqos/internal/bitrate"
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

func (ex *execution) egress(ctx context.Context, _ int, st *scenarios.Step, fab Fabric) error {
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
	ex.fab.shaped = slices.DeleteFunc(ex.fab.shaped, func(p scenarios.Port) bool { return scenarios.SamePort(p, e.Port) })
	if h != nil {
		ex.fab.shaped = append(ex.fab.shaped, e.Port)
	}
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
	return capKind("egress", CapFabric, (*execution).egress)
}

func (kindTable) TrustBoundary() stepKind {
	return capKind("trustBoundary", CapFabric, func(_ *execution, ctx context.Context, _ int, st *scenarios.Step, fab Fabric) error {
		return fab.SetTrustBoundary(ctx, st.TrustBoundary.Uplink, !st.TrustBoundary.Clear)
	})
}

// measure runs the flows as a start and stop step would, with a capture
// at every destination besides the uplink captures, and judges and
// tabulates what was delivered.
func (ex *execution) measure(ctx context.Context, i int, st *scenarios.Step, fab Fabric) error {
	m := st.Measure
	specs, err := ex.deliverySpecs(m.Flows, i)
	if err != nil {
		return err
	}
	before, err := ex.classCounts(ctx, fab)
	if err != nil {
		return err
	}
	d, err := fab.WatchDelivery(ctx, slices.Sorted(maps.Keys(specs)), func(dest string) string {
		return ex.pcap(i, "at-"+dest)
	})
	if err != nil {
		return err
	}
	n := len(ex.res.Flows)
	runErr := ex.start(ctx, i, m.Flows)
	if runErr == nil {
		runErr = ex.stop(ctx, m.Flows)
	}
	got, finErr := d.Finish(ctx, specs)
	if err := errors.Join(runErr, finErr); err != nil {
		return err
	}
	after, err := ex.classCounts(ctx, fab)
	if err != nil {
		return err
	}
	ms, delta := classDeltas(before, after)
	ex.measures = append(ex.measures, ms...)
	for _, up := range slices.Clone(ex.res.Flows[n:]) {
		ex.delivered(st, up, got[up.Name+"/"+up.Family])
	}
	var mm verdict.Mismatches
	for _, c := range m.Classes {
		k := classKey(c.Port, c.Class)
		d, ok := delta[k]
		v := verdict.Unmeasured(k, verdict.ClassDrops, c.Drops.Min, "fraction", "the class's counters were not read")
		if ok {
			v = verdict.ClassDropRange(k, d.Packets, d.Drops, c.Drops.Min, c.Drops.Max)
		}
		ex.verdicts = append(ex.verdicts, v)
		mm.Judge(v)
	}
	return failure(mm, "shaped classes: ")
}

// deliverySpecs are the measured runs' flow specs by destination, as the
// destination sees them (untagged).
func (ex *execution) deliverySpecs(names []string, step int) (map[string][]flow.Spec, error) {
	ws, err := ex.waves(names, step)
	if err != nil {
		return nil, err
	}
	out := map[string][]flow.Spec{}
	for _, w := range ws {
		for _, run := range w.runs {
			spec := run.Spec
			spec.VLAN = 0
			out[spec.To] = append(out[spec.To], spec)
		}
	}
	return out, nil
}

// delivered records the flow as its destination received it: a flow
// entry "<flow>@<destination>" with the delivered rate series, DSCP and
// the step's delivery verdicts, and a row of the delivered table.
func (ex *execution) delivered(st *scenarios.Step, up results.Flow, m Measured) {
	fr := results.Flow{Name: up.Name + "@" + up.To, Family: up.Family, From: up.From, To: up.To, Protocol: up.Protocol,
		Port: up.Port, Tool: up.Tool, Node: up.Node, OfferedBps: up.OfferedBps, Duration: up.Duration,
		DSCP: results.Histogram(m.DSCP()), RateWindow: m.Window, Rate: m.Rate}
	if m.Flow != nil {
		fr.Packets, fr.Bytes = m.Flow.Packets, m.Flow.Bytes
		fr.Pcap = up.Pcap // the uplink's; the destination's is beside it
	}
	subject := fr.Name + "/" + fr.Family
	for _, x := range st.Measure.Expect {
		if x.Flow != up.Name {
			continue
		}
		fr.Expectations = append(fr.Expectations, describeDelivered(x))
		if m.Flow == nil {
			fr.Verdicts = append(fr.Verdicts, verdict.Unmeasured(subject, verdict.DeliveredRate, 0, "packets", "the destination's capture was not analysed"))
			continue
		}
		if x.Delivered != nil {
			fr.Verdicts = append(fr.Verdicts, verdict.DeliveredRange(subject, m.Rate, float64(x.Delivered.Min), float64(x.Delivered.Max)))
		}
		if x.Loss != nil {
			fr.Verdicts = append(fr.Verdicts, verdict.FabricLossRange(subject, up.Packets, m.Flow.Packets, x.Loss.Min, x.Loss.Max))
		}
		if x.DSCP != nil {
			fr.WantDSCP = x.DSCP
			fr.Verdicts = append(fr.Verdicts, verdict.DeliveredMark(subject, m.DSCP(), *x.DSCP))
		}
	}
	if len(fr.Verdicts) == 0 { // measured for a table only: delivered at all
		fr.Verdicts = append(fr.Verdicts, verdict.Within(subject, verdict.DeliveredRate, float64(fr.Packets), 1,
			verdict.Tolerance{Below: 0, Above: float64(up.Packets)}, "packets", int(up.Packets),
			fmt.Sprintf("%d of %d packets seen on the uplink arrived", fr.Packets, up.Packets)))
	}
	rate, _ := verdict.SteadyRate(fr.Rate)
	if ex.fab.delivered == nil {
		ex.fab.delivered = map[string]float64{}
	}
	ex.fab.delivered[up.Name+"/"+up.Family] = rate
	ex.res.Flows = append(ex.res.Flows, fr)
	ex.deliveredRow(st, up, fr, rate)
}

func describeDelivered(x scenarios.DeliveredExpect) string {
	var parts []string
	if x.Delivered != nil {
		parts = append(parts, fmt.Sprintf("delivered %s..%s", x.Delivered.Min, x.Delivered.Max))
	}
	if x.Loss != nil {
		parts = append(parts, fmt.Sprintf("loss %.0f%%..%.0f%%", 100*x.Loss.Min, 100*x.Loss.Max))
	}
	if x.DSCP != nil {
		parts = append(parts, fmt.Sprintf("delivered with DSCP %d", *x.DSCP))
	}
	if x.Why != "" {
		parts = append(parts, "— "+x.Why)
	}
	return strings.Join(parts, " ")
}

func (kindTable) Measure() stepKind {
	return capKind("measure", CapFabric, (*execution).measure)
}

// Published figures of the tc HTB lab this suite reproduces (25 Gbit/s
// bonded uplink, HTB ceiling 23.75 Gbit/s): each stream alone, both
// together, and the background guarantee as reported; the production
// guarantee is 90% of the same base (9 × the background's 10%).
const (
	labCeiling     = 23.75e9
	labAlone       = 20.4e9
	labProdTogethr = 19.5e9
	labBgTogether  = 2.70e9
	labBgGuarantee = 2.16e9
	labPrGuarantee = 9 * labBgGuarantee
)

// LabColumns are the lab table's columns.
var labColumns = []string{"approach", "production alone / ceiling", "background alone / ceiling",
	"production together / its guarantee", "background together / its guarantee", "combined together / ceiling", "note"}

// labRow formats one approach as ratios, each with its rate; f are its
// rates (bit/s) in the column order: production and background alone,
// then together.
func labRow(approach, note string, f [4]float64, ceiling, prodG, bgG float64) []string {
	cell := func(v, of float64) string { return fmt.Sprintf("%.2f (%s)", v/of, bitrate.Format(v)) }
	return []string{approach, cell(f[0], ceiling), cell(f[1], ceiling),
		cell(f[2], prodG), cell(f[3], bgG), cell(f[2]+f[3], ceiling), note}
}

// LabTable computes the lab table: the published lab first, then every
// row's measured approach, rates taken from rate (steady delivered bit/s
// by flow name); a row whose flow has no rate is an error.
func LabTable(t *scenarios.LabTable, family string, rate func(flow string) (float64, bool)) (results.Table, error) {
	ceil, prodG, bgG := float64(t.Ceiling), float64(t.Production), float64(t.Background)
	tab := results.Table{Title: "tc HTB lab and NetworkQoS, as ratios of the ceiling (" + family + ")", Columns: labColumns}
	tab.Rows = append(tab.Rows, labRow("published lab (25 Gbit/s bond, HTB ceiling 23.75G)", "guarantees 19.44G / 2.16G",
		[4]float64{labAlone, labAlone, labProdTogethr, labBgTogether}, labCeiling, labPrGuarantee, labBgGuarantee))
	for i, r := range t.Rows {
		var v [4]float64
		for j, f := range r.Flows() {
			got, ok := rate(f)
			if !ok {
				return tab, fmt.Errorf("labTable rows[%d] (%s): flow %s has no delivered rate", i, r.Approach, f)
			}
			v[j] = got
		}
		tab.Rows = append(tab.Rows, labRow(r.Approach, r.Note, v, ceil, prodG, bgG))
	}
	tab.Notes = []string{fmt.Sprintf("Testbed: ceiling %s, guarantees production %s and background %s; rates are steady delivered rates at the receiving VM.",
		t.Ceiling, t.Production, t.Background)}
	return tab, nil
}

func (ex *execution) labTable(_ context.Context, _ int, st *scenarios.Step) error {
	for _, fam := range ex.fams {
		tab, err := LabTable(st.LabTable, string(fam), func(f string) (float64, bool) {
			r, ok := ex.fab.delivered[f+"/"+string(fam)]
			return r, ok
		})
		if err != nil {
			return err
		}
		ex.res.Tables = append(ex.res.Tables, tab)
	}
	return nil
}

// deliveredColumns are the delivered table's columns.
var deliveredColumns = []string{"step", "flow", "DSCP on the uplink", "DSCP delivered", "uplink rate", "delivered rate", "loss uplink → destination"}

// DeliveredRow is one measured flow of the delivered table.
func DeliveredRow(step string, up, at results.Flow, deliveredBps float64, upBps float64) []string {
	return []string{step, up.Name + " → " + up.To, dscpCell(up.DSCP), dscpCell(at.DSCP),
		bitrate.Format(upBps), bitrate.Format(deliveredBps),
		fmt.Sprintf("%.1f%% (%d of %d packets)", 100*lossOf(up.Packets, at.Packets), up.Packets-min(up.Packets, at.Packets), up.Packets)}
}

func lossOf(up, at uint64) float64 {
	if up == 0 || at >= up {
		return 0
	}
	return float64(up-at) / float64(up)
}

// dscpCell lists a histogram's DSCP values, most packets first.
func dscpCell(h []results.DSCPCount) string {
	h = slices.Clone(h)
	slices.SortStableFunc(h, func(a, b results.DSCPCount) int { return int(b.Packets) - int(a.Packets) })
	var parts []string
	for _, c := range h {
		parts = append(parts, fmt.Sprintf("%d (%d)", c.DSCP, c.Packets))
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, ", ")
}

// deliveredRow adds a measured flow to the scenario's delivered table.
func (ex *execution) deliveredRow(st *scenarios.Step, up, at results.Flow, rate float64) {
	if ex.fab.table == 0 {
		ex.res.Tables = append(ex.res.Tables, results.Table{Title: "What the fabric delivered: uplink vs destination",
			Columns: deliveredColumns, Notes: []string{"Uplink: the fabric side of the sending node's uplink (before the fabric). Destination: the receiving VM's NIC or the external host's port (past the fabric)."}})
		ex.fab.table = len(ex.res.Tables)
	}
	name := st.Name
	if name == "" {
		name = fmt.Sprintf("line %d", st.Line)
	}
	upRate, _ := verdict.SteadyRate(up.Rate)
	t := &ex.res.Tables[ex.fab.table-1]
	t.Rows = append(t.Rows, DeliveredRow(name, up, at, rate, upRate))
}

func (kindTable) LabTable() stepKind { return stepKind{name: "labTable", run: (*execution).labTable} }
