package harness

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strings"

	"github.com/nqos/nqos/flow"
	"github.com/nqos/nqos/harness/results"
	"github.com/nqos/nqos/harness/verdict"
	"github.com/nqos/nqos/scenarios"
)

// measure runs the flows as a start and stop step would, with a capture
// at every destination besides the uplink captures, and judges and
// tabulates what was delivered.
func (ex *execution) measure(ctx context.Context, i int, st *scenarios.Step) error {
	fab, err := ex.fabric()
	if err != nil {
		return err
	}
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
		return filepath.Join(ex.dir, fmt.Sprintf("step%02d-at-%s.pcap", i+1, dest))
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
	if len(mm) > 0 {
		return mm.Failure("shaped classes: ")
	}
	return nil
}

// deliverySpecs are the measured runs' flow specs by destination, as the
// destination sees them (untagged).
func (ex *execution) deliverySpecs(names []string, step int) (map[string][]flow.Spec, error) {
	out := map[string][]flow.Spec{}
	for _, fam := range ex.fams {
		for _, name := range names {
			f := ex.sc.Flow(name)
			run, _, ok, err := ex.buildRun(f, fam, step)
			if err != nil {
				return nil, err
			}
			if ok {
				spec := run.Spec
				spec.VLAN = 0
				out[f.To] = append(out[f.To], spec)
			}
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
	return stepKind{name: "measure", run: (*execution).measure, needs: []Capability{CapFabric}}
}
