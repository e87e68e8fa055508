package localnetenv

import (
	"time"

	"github.com/nqos/nqos/capture"
	"github.com/nqos/nqos/capture/live"
	"github.com/nqos/nqos/flow"
	"github.com/nqos/nqos/harness"
	"github.com/nqos/nqos/harness/traffic"
	"github.com/nqos/nqos/harness/verdict"
)

// analyze classifies each node's capture with the flows sent from that
// node and fills the flows and verdicts.
func (r *spoofResult) analyze(plan []spoofFlow, caps map[string]*live.Capture, reports map[string]traffic.InjectReport, spec spoofSpec, ready time.Time) error {
	for node, c := range caps {
		var specs []flow.Spec
		expect := map[string]flow.Expect{}
		for _, f := range plan {
			if f.node != node {
				continue
			}
			specs = append(specs, f.wireSpec(spec.VLAN))
			if f.expect != nil {
				expect[f.raw.Flow.Name] = *f.expect
			}
		}
		a, err := capture.AnalyzeFile(c.PcapPath(), specs, capture.AnalyzeOptions{Ready: ready, Expect: expect})
		if err != nil {
			return err
		}
		r.Verdicts = append(r.Verdicts, verdict.Flows(a, expect, spec.Judge)...)
		for _, f := range plan {
			if f.node == node {
				r.Flows = append(r.Flows, spoofFlowResult(f, a.Flow(f.raw.Flow.Name), reports[f.raw.Flow.Name], spec))
			}
		}
	}
	// flows in plan order, whatever the map order of the nodes
	ordered := make([]spoofedFlow, 0, len(plan))
	for _, f := range plan {
		if got, ok := r.Flow(f.raw.Flow.Name); ok {
			ordered = append(ordered, got)
		}
	}
	r.Flows = ordered
	r.Verdicts = append(r.Verdicts, r.portSecurityVerdict(spec))
	return nil
}

func spoofFlowResult(f spoofFlow, fr *capture.FlowResult, rep traffic.InjectReport, spec spoofSpec) spoofedFlow {
	out := spoofedFlow{Name: f.raw.Flow.Name, From: f.from, Node: f.node, SrcIP: f.raw.Flow.SrcIP.String(),
		SrcMAC: f.srcMAC.String(), Sent: rep.Sent, DSCP: map[int]uint64{}}
	if d := rep.End.Sub(rep.Start).Seconds(); d > 0 {
		out.OfferedKbps = float64(rep.Bytes) * 8 / d / 1000
	}
	if fr == nil {
		return out
	}
	out.Seen = fr.Packets
	if out.Sent > out.Seen {
		out.Dropped = out.Sent - out.Seen
	}
	out.DSCP = fr.DSCPHistogram()
	out.MisClassified = fr.DSCP[spec.VictimDSCP]
	if f.expect != nil && *f.expect.DSCP == spec.VictimDSCP {
		out.MisClassified = 0 // the victim's own frames carry its DSCP rightly
	}
	if d := fr.Last.Sub(fr.First).Seconds(); d > 0 {
		out.DeliveredKbps = float64(fr.Bytes) * 8 / d / 1000
	}
	return out
}

// portSecurityVerdict has package verdict judge the frames with the
// victim's MAC.
func (r *spoofResult) portSecurityVerdict(spec spoofSpec) verdict.Verdict {
	f, _ := r.Flow(flowSpooferVictimMAC)
	return verdict.ForeignMACFrames(verdict.SpoofFlow{Name: f.Name, Sent: f.Sent, Seen: f.Seen, DSCP: f.DSCP},
		verdict.Spoofing{DSCP: spec.SpooferDSCP, AsDSCP: spec.VictimDSCP})
}

// step is the spoofing as a spoof step's result: each flow's counts and
// rates, the verdicts made here, the whole result as its detail.
func (res spoofResult) step() harness.SpoofResult {
	out := harness.SpoofResult{Detail: res}
	for _, f := range res.Flows {
		out.Flows = append(out.Flows, verdict.SpoofFlow{Name: f.Name, Sent: f.Sent, Seen: f.Seen, DSCP: f.DSCP,
			OfferedKbps: f.OfferedKbps, DeliveredKbps: f.DeliveredKbps})
	}
	out.Verdicts = append(out.Verdicts, res.Verdicts...)
	return out
}
