package verify

import (
	"github.com/nqos/nqos/harness/results"
	"github.com/nqos/nqos/internal/intent"
)

// Page is the HTML fabric view of the reports (one per OVN version);
// runReports are their scenario reports, relative to the page ("" for
// none).
func Page(source string, reps []*Report, runReports []string) results.FabricPage {
	p := results.FabricPage{Source: source}
	for i, r := range reps {
		v := results.FabricView{OVNVersion: r.OVNVersion, Failures: r.Failures}
		if i < len(runReports) {
			v.RunReport = runReports[i]
		}
		for _, s := range r.Shadowed {
			v.Shadowed = append(v.Shadowed, s.VM+": "+s.Rule+" is shadowed by "+s.By+": "+s.Consequence)
		}
		for _, pr := range r.Probes {
			v.Rows = append(v.Rows, results.FabricRow{VM: pr.VM, Family: string(pr.Family), Class: pr.Dst + " " + pr.protoPort(),
				DSCP: intent.DSCPText(pr.Intent.DSCP), Meter: intent.MeterText(pr.Intent), Rule: intent.RuleText(pr.Intent), Trace: traceText(pr.Trace),
				Wire: wireText(pr.Wire), Policed: policedText(pr.Wire.Policed), Note: pr.Why, Agree: pr.Agree, Sharing: intent.SharingText(pr.Sharing)})
		}
		p.Views = append(p.Views, v)
	}
	diffs := Diff(reps)
	if len(diffs) == 0 {
		return p
	}
	p.DiffHeader = []string{"VM", "family", "class"}
	for _, o := range diffs[0].Outcomes {
		p.DiffHeader = append(p.DiffHeader, "OVN "+o.OVNVersion)
	}
	for _, d := range diffs {
		row := []string{d.VM, string(d.Family), d.Dst + " " + d.protoPort()}
		for _, o := range d.Outcomes {
			row = append(row, outcomeText(o))
		}
		p.Differences = append(p.Differences, row)
	}
	return p
}

func outcomeText(o Outcome) string {
	in := Intent{DSCP: o.DSCP, MeterKbps: o.MeterKbps, Rule: o.Rule, MeterRule: o.MeterRule}
	return intent.DSCPText(o.DSCP) + ", " + intent.MeterText(in) + ", " + intent.RuleText(in)
}
