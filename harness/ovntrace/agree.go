package ovntrace

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/nqos/nqos/internal/qos"
)

// Intent is what the compiled QoS rows say should happen to a flow on
// the uplink: the packet is delivered, with this marking and meter.
type Intent struct {
	DSCP  Marking
	Meter *Meter // nil: not policed
}

// IntentFromRow is the intent of a flow whose winning compiled row is row;
// a nil row means no row matches (unmarked, not policed).
func IntentFromRow(row *qos.QoSRow) (Intent, error) {
	if row == nil {
		return Intent{}, nil
	}
	if row.Action.DSCP < 0 || row.Action.DSCP > 63 {
		return Intent{}, fmt.Errorf("QoS row %s priority %d action dscp %d: not 0..63", row.Switch, row.Priority, row.Action.DSCP)
	}
	in := Intent{DSCP: Mark(uint8(row.Action.DSCP))}
	if row.Bandwidth != nil && row.Bandwidth.Rate > 0 {
		in.Meter = &Meter{Rate: uint64(row.Bandwidth.Rate), Burst: uint64(row.Bandwidth.Burst)}
	}
	return in, nil
}

// Policing is the capture's policing verdict for a flow.
type Policing int

// Policing verdicts. PolicingNotJudged (the zero value) is for flows
// whose offered load cannot reveal a policer; they are not compared.
const (
	PolicingNotJudged Policing = iota
	Policed
	NotPoliced
)

// Observation is what the capture on the uplink saw of a flow.
type Observation struct {
	Packets  int   // packets of the flow captured; 0 means none arrived
	DSCP     uint8 // the single DSCP they carried (from the histogram)
	SentDSCP uint8 // the DSCP the sender wrote, what "unmarked" means on the wire
	Policing Policing
	// NotSent says why the sender put no packet on the port (its peer's
	// address never resolved): the capture leg then has nothing to say
	// and only intent and ovn-trace are compared.
	NotSent string
}

// Leg names one of the three sources Agree compares.
type Leg string

// The three legs.
const (
	LegIntent  Leg = "intent"
	LegTrace   Leg = "trace"
	LegCapture Leg = "capture"
)

// Aspects Agree compares.
const (
	AspectOutput = "output"
	AspectDSCP   = "DSCP"
	AspectMeter  = "meter"
)

// Mismatch is one disagreeing pair of legs on one aspect.
type Mismatch struct {
	Aspect string
	A, B   Leg
}

// AspectReport is what each leg says about one aspect and which pairs
// disagree; a leg that has nothing to say (no delivery, not judged) is "".
type AspectReport struct {
	Aspect     string
	Says       map[Leg]string
	Mismatches []Mismatch
}

// Disagreement is Agree's error: every aspect on which two legs differ.
type Disagreement struct {
	Flow    string
	Aspects []AspectReport
}

func (d *Disagreement) Error() string {
	parts := make([]string, 0, len(d.Aspects))
	for _, a := range d.Aspects {
		var says, pairs []string
		for _, l := range []Leg{LegIntent, LegTrace, LegCapture} {
			if s := a.Says[l]; s != "" {
				says = append(says, legTitle(l)+" says "+s)
			}
		}
		for _, m := range a.Mismatches {
			pairs = append(pairs, string(m.A)+"≠"+string(m.B))
		}
		parts = append(parts, a.Aspect+": "+strings.Join(says, ", ")+": "+strings.Join(pairs, ", "))
	}
	return fmt.Sprintf("flow %s: %s", d.Flow, strings.Join(parts, "; "))
}

func legTitle(l Leg) string {
	if l == LegTrace {
		return "ovn-trace"
	}
	return string(l)
}

// claim is one leg's statement on an aspect: exact compares intent with
// trace; wire compares either of them with the capture.
type claim struct {
	leg   Leg
	shown string
	exact string
	wire  string
}

// Agree requires intent, ovn-trace and capture to agree on the flow's
// delivery, DSCP and policing. It returns nil or a *Disagreement naming
// each disagreeing pair.
func Agree(intent Intent, pred Prediction, observed Observation) error {
	egress, delivered := pred.Egress()
	d := &Disagreement{Flow: pred.Flow.String()}
	d.add(AspectOutput, outputClaims(pred, egress, delivered, observed))
	d.add(AspectDSCP, dscpClaims(intent, egress, delivered, observed))
	d.add(AspectMeter, meterClaims(intent, egress, delivered, observed))
	if len(d.Aspects) == 0 {
		return nil
	}
	return d
}

func outputClaims(pred Prediction, egress Delivery, delivered bool, obs Observation) []claim {
	trace := claim{leg: LegTrace, shown: "no single output to a localnet port", wire: "none"}
	if delivered {
		trace.shown = fmt.Sprintf("output to %q (type %q)", egress.Output.Port, egress.Output.Type)
		trace.wire = "delivered"
	} else if len(pred.Deliveries) == 0 {
		trace.shown = "dropped"
	}
	cs := []claim{{leg: LegIntent, shown: "delivered", wire: "delivered"}, trace}
	if obs.NotSent != "" {
		return cs
	}
	capture := claim{leg: LegCapture, shown: "no packets", wire: "none"}
	if obs.Packets > 0 {
		capture.shown, capture.wire = strconv.Itoa(obs.Packets)+" packets", "delivered"
	}
	return append(cs, capture)
}

func dscpClaims(in Intent, egress Delivery, delivered bool, obs Observation) []claim {
	cs := []claim{{leg: LegIntent, shown: marking(in.DSCP, obs.SentDSCP),
		exact: in.DSCP.String(), wire: wireDSCP(in.DSCP, obs.SentDSCP)}}
	if delivered {
		cs = append(cs, claim{leg: LegTrace, shown: marking(egress.DSCP, obs.SentDSCP),
			exact: egress.DSCP.String(), wire: wireDSCP(egress.DSCP, obs.SentDSCP)})
	}
	if obs.Packets > 0 {
		w := "DSCP " + strconv.Itoa(int(obs.DSCP))
		cs = append(cs, claim{leg: LegCapture, shown: w, wire: w})
	}
	return cs
}

func marking(m Marking, sent uint8) string {
	if m.Set {
		return m.String()
	}
	return fmt.Sprintf("unmarked (sent DSCP %d)", sent)
}

func wireDSCP(m Marking, sent uint8) string { return "DSCP " + strconv.Itoa(int(m.Wire(sent))) }

func meterClaims(in Intent, egress Delivery, delivered bool, obs Observation) []claim {
	var intent []Meter
	if in.Meter != nil {
		intent = []Meter{*in.Meter}
	}
	cs := []claim{meterClaim(LegIntent, intent)}
	if delivered {
		cs = append(cs, meterClaim(LegTrace, egress.Meters))
	}
	switch obs.Policing {
	case Policed:
		cs = append(cs, claim{leg: LegCapture, shown: "policed", wire: "policed"})
	case NotPoliced:
		cs = append(cs, claim{leg: LegCapture, shown: "not policed", wire: "not policed"})
	}
	return cs
}

func meterClaim(leg Leg, ms []Meter) claim {
	if len(ms) == 0 {
		return claim{leg: leg, shown: "no meter", exact: "no meter", wire: "not policed"}
	}
	s := make([]string, len(ms))
	for i, m := range ms {
		s[i] = m.String()
	}
	shown := strings.Join(s, " + ")
	return claim{leg: leg, shown: shown, exact: shown, wire: "policed"}
}

// add compares every pair of claims and records the aspect if any differ.
func (d *Disagreement) add(aspect string, cs []claim) {
	r := AspectReport{Aspect: aspect, Says: map[Leg]string{}}
	for i, a := range cs {
		r.Says[a.leg] = a.shown
		for _, b := range cs[i+1:] {
			same := a.wire == b.wire
			if a.exact != "" && b.exact != "" {
				same = a.exact == b.exact
			}
			if !same {
				r.Mismatches = append(r.Mismatches, Mismatch{Aspect: aspect, A: a.leg, B: b.leg})
			}
		}
	}
	if len(r.Mismatches) > 0 {
		d.Aspects = append(d.Aspects, r)
	}
}
