package verify

import (
	"fmt"
	"github.com/nqos/nqos/internal/intent"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
)

// WriteText prints the report as tables: one row per probe (intent,
// ovn-trace, wire), the shadowed rules, the disagreements and a summary.
func WriteText(w io.Writer, r *Report) error {
	fmt.Fprintf(w, "OVN %s\n", r.OVNVersion)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "VM\tFAMILY\tDST\tPROTO\tINTENT DSCP\tMETER\tRULE\tSHARING\tTRACE\tWIRE\tPOLICED\tAGREE")
	for _, p := range r.Probes {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", p.VM, p.Family, p.Dst, p.protoPort(),
			intent.DSCPText(p.Intent.DSCP), intent.MeterText(p.Intent), intent.RuleText(p.Intent), intent.SharingText(p.Sharing),
			traceText(p.Trace), wireText(p.Wire), policedText(p.Wire.Policed), yesNo(p.Agree))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if len(r.Shadowed) > 0 {
		fmt.Fprintln(w, "\nshadowed rules (select the VM, never win a packet):")
		for _, s := range r.Shadowed {
			fmt.Fprintf(w, "  %s: %s is shadowed by %s: %s\n", s.VM, s.Rule, s.By, s.Consequence)
		}
	}
	for _, f := range r.Failures {
		fmt.Fprintf(w, "DISAGREE %s\n", f)
	}
	_, err := fmt.Fprintf(w, "%d probes, %d agree\n", r.Summary.Probes, r.Summary.Agree)
	return err
}

func traceText(t *Trace) string {
	if t == nil {
		return "no prediction"
	}
	s := intent.DSCPText(t.DSCP)
	if t.Metered {
		s += " metered"
	}
	return s
}

func wireText(w Wire) string {
	if w.Packets == 0 {
		return "no packets"
	}
	var parts []string
	for _, k := range slices.SortedFunc(maps.Keys(w.DSCP), func(a, b string) int { return atoi(a) - atoi(b) }) {
		parts = append(parts, fmt.Sprintf("%d×%s", w.DSCP[k], k))
	}
	return strings.Join(parts, " ")
}

func atoi(s string) int {
	n, _ := strconv.Atoi(s)
	return n
}

func policedText(p *Policed) string {
	switch {
	case p == nil:
		return "-"
	case p.OfferedKbps == nil:
		return fmt.Sprintf("-> %.0f kbps", p.DeliveredKbps)
	}
	return fmt.Sprintf("%.0f -> %.0f kbps", *p.OfferedKbps, p.DeliveredKbps)
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "NO"
}
