package verify

import (
	"fmt"
	"io"
	"text/tabwriter"
)

// Difference is one class whose fabric outcome differs between two OVN
// versions.
type Difference struct {
	ClassRef
	// Outcomes are per report, in the order the reports were given.
	Outcomes []Outcome `json:"outcomes"`
}

// Outcome is what one OVN version does with a class.
type Outcome struct {
	OVNVersion string  `json:"ovnVersion"`
	DSCP       *int    `json:"dscp"`
	MeterKbps  *uint32 `json:"meterKbps"`
	Rule       *string `json:"rule"`
	MeterRule  string  `json:"meterRule,omitempty"`
	Agree      bool    `json:"agree"`
}

// Diff lists the classes whose intended DSCP or meter differ between
// the reports (each report one OVN version), sorted as the probes are.
func Diff(reports []*Report) []Difference {
	if len(reports) < 2 {
		return nil
	}
	type key struct {
		vm, fam, dst, proto string
		port                int
	}
	keyOf := func(p ProbeResult) key { return key{p.VM, string(p.Family), p.Dst, p.Protocol, deref(p.Port)} }
	index := make([]map[key]ProbeResult, len(reports))
	for i, r := range reports {
		index[i] = map[key]ProbeResult{}
		for _, p := range r.Probes {
			index[i][keyOf(p)] = p
		}
	}
	var out []Difference
	for _, p := range reports[0].Probes {
		d := Difference{ClassRef: p.ClassRef}
		differs := false
		for i, r := range reports {
			q, ok := index[i][keyOf(p)]
			if !ok {
				differs = true
				continue
			}
			d.Outcomes = append(d.Outcomes, Outcome{OVNVersion: r.OVNVersion, DSCP: q.Intent.DSCP, MeterKbps: q.Intent.MeterKbps, Rule: q.Intent.Rule, MeterRule: q.Intent.MeterRule, Agree: q.Agree})
			differs = differs || !sameOutcome(p.Intent, q.Intent)
		}
		if differs {
			out = append(out, d)
		}
	}
	return out
}

func sameOutcome(a, b Intent) bool {
	return eqPtr(a.DSCP, b.DSCP) && eqPtr(a.MeterKbps, b.MeterKbps)
}

func eqPtr[T comparable](a, b *T) bool {
	return (a == nil) == (b == nil) && (a == nil || *a == *b)
}

// WriteDiff prints the differences as a table, one column per version.
func WriteDiff(w io.Writer, diffs []Difference) error {
	if len(diffs) == 0 {
		_, err := fmt.Fprintln(w, "\nno class differs between the OVN versions")
		return err
	}
	fmt.Fprintln(w, "\ndifferences between OVN versions (DSCP, meter, winning rule):")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprint(tw, "VM\tFAMILY\tDST\tPROTO")
	for _, o := range diffs[0].Outcomes {
		fmt.Fprintf(tw, "\tOVN %s", o.OVNVersion)
	}
	fmt.Fprintln(tw)
	for _, d := range diffs {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s", d.VM, d.Family, d.Dst, d.protoPort())
		for _, o := range d.Outcomes {
			fmt.Fprintf(tw, "\t%s", outcomeText(o))
		}
		fmt.Fprintln(tw)
	}
	return tw.Flush()
}
