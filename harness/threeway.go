package harness

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/nqos/nqos/flow"
	"github.com/nqos/nqos/harness/verdict"

	"github.com/nqos/nqos/harness/ovntrace"
	"github.com/nqos/nqos/harness/results"
	"github.com/nqos/nqos/internal/intent"
	"github.com/nqos/nqos/internal/qos"
)

// sentDSCP is the DSCP every sender writes: the raw injector and iperf3
// (without -S) both send 0, which is what "unmarked" means on the wire.
const sentDSCP = 0

// threeWay is the simulation tier of one measured run: the compiled
// intent (what the compiler's rows for the objects at this step say
// should win), OVN's prediction (ovn-trace) and the capture must agree.
// It returns the report entry and the "three-way" verdict; both nil when
// the environment has no OVN to simulate with.
func (ex *execution) threeWay(ctx context.Context, run FlowRun, m Measured) (*results.ThreeWay, *verdict.Verdict) {
	pred, err := ex.env.Trace(ctx, run)
	if errors.Is(err, ErrNoSimulation) {
		return nil, nil
	}
	tw := &results.ThreeWay{Microflow: pred.Flow.String()}
	fail := func(format string, args ...any) (*results.ThreeWay, *verdict.Verdict) {
		tw.Detail = fmt.Sprintf(format, args...)
		return tw, &verdict.Verdict{Property: verdict.ThreeWay, Message: fmt.Sprintf("FAIL %s three-way: %s", run.Name, tw.Detail)}
	}
	if err != nil {
		return fail("no ovn-trace prediction: %v", err)
	}
	tw.Trace, tw.Predicted = describePrediction(pred), predicted(pred)
	intent, rows, err := ex.intent(run, pred.Flow.Datapath)
	if err != nil {
		return fail("no compiled intent: %v", err)
	}
	tw.Intent, tw.IntentRow = describeIntent(intent), rows
	obs, err := observe(m, run, intent)
	if err != nil {
		return fail("capture: %v", err)
	}
	obs.NotSent = m.Unresolved
	tw.Capture = describeObservation(obs)
	if err := ovntrace.Agree(intent, pred, obs); err != nil {
		return fail("%v", err)
	}
	tw.Agree = true
	agree := "intent, ovn-trace and capture agree"
	if obs.NotSent != "" {
		agree = "intent and ovn-trace agree, nothing was sent"
	}
	return tw, &verdict.Verdict{Property: verdict.ThreeWay, Pass: true,
		Message: fmt.Sprintf("PASS %s three-way: %s (%s)", run.Name, agree, tw.Intent)}
}

// intent is the compiled intent for the run's first packet on datapath:
// on OVN before 24.09 marking and metering are separate stages, so the
// DSCP comes from the highest-priority matching row and the meter from
// the highest-priority matching row with a bandwidth; on later OVN one
// row decides both. rows describes the winning rows.
func (ex *execution) intent(run FlowRun, datapath string) (ovntrace.Intent, []string, error) {
	d, err := ex.world.Compile()
	if err != nil {
		return ovntrace.Intent{}, nil, err
	}
	vm := ex.sc.VM(run.Spec.From)
	p := intent.Packet{InPort: ex.world.PortOn(vm, run.Network), Src: run.Spec.SrcIP, Dst: run.Spec.DstIP,
		Protocol: string(run.Spec.Protocol), DstPort: int(run.Spec.DstPort)}
	wn, err := intent.StageWinners(&d, datapath, p, ex.res.OVNVersion)
	if err != nil {
		return ovntrace.Intent{}, nil, fmt.Errorf("flow %s: %w", run.Name, err)
	}
	mark, meter := wn.Mark, wn.Meter
	in, err := ovntrace.IntentFromRow(mark)
	if err != nil {
		return in, nil, err
	}
	in.Meter = nil
	if meter != nil {
		mi, err := ovntrace.IntentFromRow(meter)
		if err != nil {
			return in, nil, err
		}
		in.Meter = mi.Meter
	}
	var rows []string
	for _, r := range []*qos.QoSRow{mark, meter} {
		if r != nil && (len(rows) == 0 || r != mark) {
			rows = append(rows, fmt.Sprintf("%s rule %s priority %d: %s", r.ExternalIDs[qos.ObjectNameKey], r.ExternalIDs[qos.RuleIndexKey], r.Priority, r.Match))
		}
	}
	return in, rows, nil
}

// observe reduces the capture to the single DSCP it saw and whether the
// flow was held at the meter's rate (see policing).
func observe(m Measured, run FlowRun, in ovntrace.Intent) (ovntrace.Observation, error) {
	var hist [64]uint64
	for d, n := range m.DSCP() {
		if d < 0 || d > 63 {
			return ovntrace.Observation{}, fmt.Errorf("DSCP %d out of range", d)
		}
		hist[d] = n
	}
	meter := run.Expect
	if in.Meter != nil {
		meter = flow.Expect{MaxRateKbps: in.Meter.Rate, BurstKbits: in.Meter.Burst}
	}
	return ovntrace.ObserveHistogram(hist, sentDSCP, policing(m, run.Spec.Rate, meter))
}

// policing is the capture's claim about the meter of e: a flow is
// policed when its steady rate stays within what the token bucket lets
// through over the steady windows, rate·(1+verdict.OfferedSlack) plus the
// bucket spread over their duration (a meter starts with a full bucket,
// and a rule without burst gets a bucket of one second of its rate), and
// not policed when it exceeds that. A flow offered at or below that
// allowance (TCP offers without limit), or without a meter rate or window
// to compare with, is not judged. The strict token-bucket bound is the
// separate policing-bound verdict.
func policing(m Measured, offered uint64, e flow.Expect) ovntrace.Policing {
	steady, n := verdict.SteadyRate(m.Rate)
	if !e.Policed() || n == 0 || m.Window <= 0 {
		return ovntrace.PolicingNotJudged
	}
	allowed := e.RateBits()*(1+verdict.OfferedSlack) + e.BurstBits()/(time.Duration(n)*m.Window).Seconds()
	switch {
	case offered != 0 && float64(offered) <= allowed:
		return ovntrace.PolicingNotJudged
	case steady <= allowed:
		return ovntrace.Policed
	}
	return ovntrace.NotPoliced
}

func describeIntent(in ovntrace.Intent) string {
	meter := "no meter"
	if in.Meter != nil {
		meter = in.Meter.String()
	}
	return in.DSCP.String() + ", " + meter
}

func describePrediction(p ovntrace.Prediction) string {
	d, ok := p.Egress()
	if !ok {
		if len(p.Deliveries) == 0 {
			return "dropped"
		}
		return fmt.Sprintf("%d deliveries, none single to a localnet port", len(p.Deliveries))
	}
	meters := make([]string, len(d.Meters))
	for i, m := range d.Meters {
		meters[i] = m.String()
	}
	if len(meters) == 0 {
		meters = []string{"no meter"}
	}
	return fmt.Sprintf("output %s: %s, %s", d.Output.Port, d.DSCP, strings.Join(meters, " + "))
}

func describeObservation(o ovntrace.Observation) string {
	pol := map[ovntrace.Policing]string{ovntrace.PolicingNotJudged: "policing not judged",
		ovntrace.Policed: "policed", ovntrace.NotPoliced: "not policed"}[o.Policing]
	if o.NotSent != "" && o.Packets == 0 {
		return "not sent: " + o.NotSent
	}
	if o.Packets == 0 {
		return "no packets, " + pol
	}
	return fmt.Sprintf("%d packets DSCP %d, %s", o.Packets, o.DSCP, pol)
}

// predicted is the typed trace leg of p: nil without a single egress.
func predicted(p ovntrace.Prediction) *results.Predicted {
	d, ok := p.Egress()
	if !ok {
		return nil
	}
	out := &results.Predicted{Metered: len(d.Meters) > 0}
	if d.DSCP.Set {
		v := int(d.DSCP.Value)
		out.DSCP = &v
	}
	return out
}
