package harness

import (
	"context"
	"fmt"
	"github.com/nqos/nqos/harness/verdict"
	"slices"
	"strings"
	"time"

	"github.com/nqos/nqos/harness/results"
	"github.com/nqos/nqos/scenarios"
)

func hasV4(fams []scenarios.Family) bool { return slices.Contains(fams, scenarios.V4) }

// spoof runs the spoof flows and judges them: the spoofer's frames with
// the forged IP keep its own DSCP and meter (the capture's token-bucket
// verdicts), frames with the forged MAC never leave the node, the forged
// VM's own frames keep its class.
func (ex *execution) spoof(ctx context.Context, sp *scenarios.Spoof) error {
	if !hasV4(ex.fams) {
		return fmt.Errorf("spoof: the spoofed frames are IPv4 and this run has no IPv4")
	}
	adv, err := capable[Adversary](ex, CapAdversary)
	if err != nil {
		return err
	}
	res, err := adv.Spoof(ctx, sp)
	if err != nil {
		return fmt.Errorf("spoof by VM %s as VM %s: %w", sp.VM, sp.As, err)
	}
	ex.detail = res.Detail
	for _, f := range res.Flows {
		ex.measures = append(ex.measures, results.Measure{Name: f.Name + ": frames seen on the uplink / sent", Count: int(f.Seen), Unit: "frames",
			Note: fmt.Sprintf("sent %d, dropped %d, DSCP %v, offered %.0f kbit/s, delivered %.0f kbit/s", f.Sent, f.Sent-min(f.Seen, f.Sent), dscpList(f.DSCP), f.OfferedKbps, f.DeliveredKbps)})
	}
	var mism verdict.Mismatches
	mism.Add(verdict.DSCP, classMismatches(res.Flow(SpoofOwn), sp.DSCP, "the spoofer's own frames")...)
	mism.Add(verdict.DSCP, classMismatches(res.Flow(SpoofForgedIP), sp.DSCP, "frames with VM "+sp.As+"'s IP")...)
	mism.Add(verdict.DSCP, classMismatches(res.Flow(SpoofControl), sp.AsDSCP, "VM "+sp.As+"'s own frames")...)
	if c := res.Flow(SpoofControl); c.Seen != c.Sent {
		mism.Add(verdict.DSCP, fmt.Sprintf("VM %s's own frames: %d of %d seen", sp.As, c.Seen, c.Sent))
	}
	if m := res.Flow(SpoofForgedMAC); m.Sent == 0 || m.Seen != 0 {
		mism.Add(verdict.PortSecurity, fmt.Sprintf("frames with VM %s's MAC: %d sent, %d left the node, want all dropped by port security", sp.As, m.Sent, m.Seen))
	}
	bound := false
	ex.verdicts = append(ex.verdicts, res.Verdicts...)
	for _, v := range res.Verdicts {
		ex.measures = append(ex.measures, results.Measure{Name: "capture verdict", Count: 1, Unit: string(v.Property), Note: v.Message})
		bound = bound || v.Property == verdict.PolicingBound
		if !v.Pass {
			mism.Add(v.Property, v.Message)
		}
	}
	if !bound {
		mism.Add(verdict.PolicingBound, "the capture judged no token-bucket bound for the spoofer's meter")
	}
	if len(mism) > 0 {
		return mism.Failure("")
	}
	return nil
}

// classMismatches: some frames seen, every one with DSCP dscp.
func classMismatches(f SpoofFlow, dscp int, what string) []string {
	if f.Seen == 0 || f.DSCP[dscp] != f.Seen {
		return []string{fmt.Sprintf("%s: %d of %d sent seen, DSCP %v, want all with DSCP %d", what, f.Seen, f.Sent, dscpList(f.DSCP), dscp)}
	}
	return nil
}

func dscpList(h map[int]uint64) string {
	var parts []string
	for d := range 64 {
		if n := h[d]; n > 0 {
			parts = append(parts, fmt.Sprintf("%d×%d", n, d))
		}
	}
	return "[" + strings.Join(parts, " ") + "]"
}

// ovnBaseline measures OVN's own port-group change time and keeps it
// for later startVM probes.
func (ex *execution) ovnBaseline(ctx context.Context, b *scenarios.OVNBaseline) error {
	if !hasV4(ex.fams) {
		return fmt.Errorf("ovnBaseline: the probe is IPv4 and this run has no IPv4")
	}
	adv, err := capable[Adversary](ex, CapAdversary)
	if err != nil {
		return err
	}
	res, err := adv.PortGroupBaseline(ctx, ex.sc.VM(b.VM), b)
	if err != nil {
		return fmt.Errorf("OVN port-group baseline with VM %s: %w", b.VM, err)
	}
	if len(res.Add) == 0 {
		return fmt.Errorf("OVN port-group baseline with VM %s: no sample", b.VM)
	}
	ex.detail = res.Detail
	add := spreadOf(res.Add)
	ex.measures = append(ex.measures,
		results.Measure{Name: "OVN pg-set-ports → first marked packet on the uplink (median)", Duration: add.median, Note: fmt.Sprintf("%d samples %v", len(res.Add), res.Add)},
		results.Measure{Name: "OVN pg-set-ports → first marked packet (max)", Duration: add.max},
		results.Measure{Name: "OVN port group cleared → first unmarked packet (median)", Duration: spreadOf(res.Remove).median, Note: fmt.Sprintf("%v", res.Remove)})
	ex.adv.baseline = &res
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
