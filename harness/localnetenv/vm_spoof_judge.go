package localnetenv

import (
	"time"

	"github.com/nqos/nqos/capture"
	"github.com/nqos/nqos/capture/live"
	"github.com/nqos/nqos/flow"
	"github.com/nqos/nqos/harness/lifeprobe"
	"github.com/nqos/nqos/harness/traffic"
	"github.com/nqos/nqos/harness/verdict"
)

// analyze classifies each node's capture with the flows sent from that
// node and fills the flows and verdicts.
func analyzeSpoof(r *lifeprobe.Spoofing, plan []spoofFlow, caps map[string]*live.Capture, reports map[string]traffic.InjectReport, spec spoofSpec, ready time.Time) error {
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
	ordered := make([]lifeprobe.SpoofedFlow, 0, len(plan))
	for _, f := range plan {
		if got, ok := r.Find(f.raw.Flow.Name); ok {
			ordered = append(ordered, got)
		}
	}
	r.Flows = ordered
	r.Verdicts = append(r.Verdicts, portSecurityVerdict(r, spec))
	return nil
}

func spoofFlowResult(f spoofFlow, fr *capture.FlowResult, rep traffic.InjectReport, spec spoofSpec) lifeprobe.SpoofedFlow {
	out := lifeprobe.SpoofedFlow{Name: f.raw.Flow.Name, From: f.from, Node: f.node, SrcIP: f.raw.Flow.SrcIP.String(),
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
func portSecurityVerdict(r *lifeprobe.Spoofing, spec spoofSpec) verdict.Verdict {
	return verdict.ForeignMACFrames(r.Flow(flowSpooferVictimMAC),
		verdict.Spoofing{DSCP: spec.SpooferDSCP, AsDSCP: spec.VictimDSCP})
}
