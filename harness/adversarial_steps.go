package harness

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/nqos/nqos/harness/results"
	"github.com/nqos/nqos/harness/verdict"
	"github.com/nqos/nqos/scenarios"
)

func hasV4(fams []scenarios.Family) bool { return slices.Contains(fams, scenarios.V4) }

// v4AdversaryKind is a step kind needing the Adversary whose traffic is
// IPv4 (why says so): a run without IPv4 cannot run it.
func v4AdversaryKind(name, why string, run func(ex *execution, ctx context.Context, i int, st *scenarios.Step, adv Adversary) error) stepKind {
	k := capKind(name, CapAdversary, run)
	withAdv := k.run
	k.run = func(ex *execution, ctx context.Context, i int, st *scenarios.Step) error {
		if !hasV4(ex.fams) {
			return fmt.Errorf("%s and this run has no IPv4", why)
		}
		return withAdv(ex, ctx, i, st)
	}
	return k
}

// spoof runs the spoof flows and has package verdict judge them: the
// spoofer's frames with the forged IP keep its own DSCP and meter (the
// capture's token-bucket verdicts), frames with the forged MAC never leave
// the node, the forged VM's own frames keep its class.
func (ex *execution) spoof(ctx context.Context, _ int, st *scenarios.Step, adv Adversary) error {
	sp := st.Spoof
	res, err := adv.Spoof(ctx, sp)
	if err != nil {
		return fmt.Errorf("spoof by VM %s as VM %s: %w", sp.VM, sp.As, err)
	}
	ex.detail = res
	for _, f := range res.Flows {
		ex.measures = append(ex.measures, results.Measure{Name: f.Name + ": frames seen on the uplink / sent", Count: int(f.Seen), Unit: "frames",
			Note: fmt.Sprintf("sent %d, dropped %d, DSCP %v, offered %.0f kbit/s, delivered %.0f kbit/s", f.Sent, f.Sent-min(f.Seen, f.Sent), verdict.DSCPList(f.DSCP), f.OfferedKbps, f.DeliveredKbps)})
	}
	ex.verdicts = append(ex.verdicts, res.Verdicts...)
	for _, v := range res.Verdicts {
		ex.measures = append(ex.measures, results.Measure{Name: "capture verdict", Count: 1, Unit: string(v.Property), Note: v.Message})
	}
	mism := verdict.SpoofMismatches(verdict.Spoofing{As: sp.As, DSCP: sp.DSCP, AsDSCP: sp.AsDSCP}, res.Flow, res.Verdicts)
	return failure(mism, "")
}

// ovnBaseline measures OVN's own port-group change time and keeps it
// for later startVM probes.
func (ex *execution) ovnBaseline(ctx context.Context, _ int, st *scenarios.Step, adv Adversary) error {
	b := st.OVNBaseline
	res, err := adv.PortGroupBaseline(ctx, ex.sc.VM(b.VM), b)
	if err != nil {
		return fmt.Errorf("OVN port-group baseline with VM %s: %w", b.VM, err)
	}
	if len(res.Add.Samples) == 0 {
		return fmt.Errorf("OVN port-group baseline with VM %s: no sample", b.VM)
	}
	ex.detail = res
	add := spreadOf(res.Add.Samples)
	ex.measures = append(ex.measures,
		results.Measure{Name: "OVN pg-set-ports → first marked packet on the uplink (median)", Duration: add.median, Note: fmt.Sprintf("%d samples %v", len(res.Add.Samples), res.Add.Samples)},
		results.Measure{Name: "OVN pg-set-ports → first marked packet (max)", Duration: add.max},
		results.Measure{Name: "OVN port group cleared → first unmarked packet (median)", Duration: spreadOf(res.Remove.Samples).median, Note: fmt.Sprintf("%v", res.Remove.Samples)})
	ex.ovnAdd = &add
	return nil
}

type spreadStats struct{ min, median, max time.Duration }

func spreadOf(ds []time.Duration) spreadStats {
	if len(ds) == 0 {
		return spreadStats{}
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	return spreadStats{min: s[0], median: s[len(s)/2], max: s[len(s)-1]}
}

func (kindTable) Spoof() stepKind {
	return v4AdversaryKind("spoof", "spoof: the spoofed frames are IPv4", (*execution).spoof)
}

func (kindTable) OVNBaseline() stepKind {
	return v4AdversaryKind("ovnBaseline", "ovnBaseline: the probe is IPv4", (*execution).ovnBaseline)
}
