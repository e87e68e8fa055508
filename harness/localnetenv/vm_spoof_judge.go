package localnetenv

import (
	"time"

	"github.com/nqos/nqos/capture"
	"github.com/nqos/nqos/capture/live"
	"github.com/nqos/nqos/flow"
	"github.com/nqos/nqos/harness/lifeprobe"
	"github.com/nqos/nqos/harness/traffic"
	"github.com/nqos/nqos/harness/verdict"
	"github.com/nqos/nqos/scenarios"
)

// spoofBelow is how far below its class's rate the spoofer's steady
// rate may fall: the suite's default (scenarios.Policed.Below); measured
// 9.52-10.05 Mbit/s through a 10 Mbit/s meter.
const spoofBelow = 0.15

// analyzeSpoof classifies each node's capture with the flows sent from
// that node and fills the flows and verdicts, judged with the suite's
// policing tolerance and default floor (1 - spoofBelow).
func analyzeSpoof(r *lifeprobe.Spoofing, plan []spoofFlow, caps map[string]*live.Capture, reports map[string]traffic.InjectReport, sp *scenarios.Spoof, ready time.Time) error {
	for node, c := range caps {
		var specs []flow.Spec
		expect := map[string]flow.Expect{}
		for _, f := range plan {
			if f.node != node {
				continue
			}
			specs = append(specs, f.wire)
			if f.expect != nil {
				expect[f.raw.Flow.Name] = *f.expect
			}
		}
		a, err := capture.AnalyzeFile(c.PcapPath(), specs, capture.AnalyzeOptions{Ready: ready, Expect: expect})
		if err != nil {
			return err
		}
		r.Verdicts = append(r.Verdicts, verdict.Flows(a, expect, verdict.Testbed(1-spoofBelow))...)
		for _, f := range plan {
			if f.node == node {
				r.Flows = append(r.Flows, spoofFlowResult(f, a.Flow(f.raw.Flow.Name), reports[f.raw.Flow.Name], sp.AsDSCP))
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
	r.Verdicts = append(r.Verdicts, portSecurityVerdict(r, sp))
	return nil
}

// spoofFlowResult is what the capture saw of one planned flow; frames
// in the victim's class victimDSCP count as misclassified.
func spoofFlowResult(f spoofFlow, fr *capture.FlowResult, rep traffic.InjectReport, victimDSCP int) lifeprobe.SpoofedFlow {
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
	out.MisClassified = fr.DSCP[victimDSCP]
	if f.expect != nil && *f.expect.DSCP == victimDSCP {
		out.MisClassified = 0 // the victim's own frames carry its DSCP rightly
	}
	if d := fr.Last.Sub(fr.First).Seconds(); d > 0 {
		out.DeliveredKbps = float64(fr.Bytes) * 8 / d / 1000
	}
	return out
}

// portSecurityVerdict has package verdict judge the frames with the
// victim's MAC.
func portSecurityVerdict(r *lifeprobe.Spoofing, sp *scenarios.Spoof) verdict.Verdict {
	return verdict.ForeignMACFrames(r.Flow(verdict.SpoofForgedMAC),
		verdict.Spoofing{DSCP: sp.DSCP, AsDSCP: sp.AsDSCP})
}
