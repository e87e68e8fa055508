package capture

import (
	"fmt"
	"maps"
	"slices"
	"strings"
)

// Summary renders the analysis as deterministic text (flows in spec order,
// histograms sorted by DSCP value) for logs and golden files.
func (a *Analysis) Summary() string {
	var sb strings.Builder
	fmt.Fprintf(&sb, "frames %d: non-ip %d, malformed %d, icmp-errors %d, unmatched %d\n",
		a.Total, a.NonIP, a.Malformed, a.ICMPErrors.Packets, a.Unmatched.Packets)
	for _, f := range a.Flows {
		fmt.Fprintf(&sb, "flow %s: packets %d bytes %d dscp %s; before-ready %d dscp %s; reverse %d",
			f.Spec.Name, f.Packets, f.Bytes, histString(&f.Counts), f.BeforeReady.Packets, histString(&f.BeforeReady), f.Reverse.Packets)
		if f.Seq.Distinct > 0 {
			fmt.Fprintf(&sb, "; seq distinct %d max %d dup %d reordered %d", f.Seq.Distinct, f.Seq.Max, f.Seq.Duplicates, f.Seq.Reordered)
		}
		if f.Packets > 0 {
			fmt.Fprintf(&sb, "; first %s last %s", f.First.Format("15:04:05.000000"), f.Last.Format("15:04:05.000000"))
		}
		sb.WriteString("\n")
	}
	for _, b := range a.Buckets {
		fmt.Fprintf(&sb, "meter %s %v: packets %d bytes %d max-excess %.0f bits (burst %.0f)\n",
			b.Key, b.Flows, b.Packets, b.Bytes, b.MaxExcessBits, b.BurstBits)
	}
	for _, s := range a.UnmatchedSamples {
		fmt.Fprintf(&sb, "unmatched: %s\n", s)
	}
	return sb.String()
}

func histString(c *Counts) string {
	h := c.DSCPHistogram()
	keys := slices.Sorted(maps.Keys(h))
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%d:%d", k, h[k])
	}
	return "{" + strings.Join(parts, " ") + "}"
}
