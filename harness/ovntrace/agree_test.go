package ovntrace

import (
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/nqos/nqos/internal/qos"
)

var agreeFlow = flow(swBlue, "vm-payments", gateway, "10.0.0.5", "10.20.0.7", ProtoTCP, 2049)

func uplinkPred(d Marking, meters ...Meter) Prediction {
	return Prediction{Flow: agreeFlow, Deliveries: []Delivery{{Output: Output{Port: "ln", Type: "localnet"}, DSCP: d, Meters: meters}}}
}

// mismatches returns the disagreeing pairs of Agree's error, nil for nil.
func mismatches(t *testing.T, err error) []Mismatch {
	t.Helper()
	if err == nil {
		return nil
	}
	var d *Disagreement
	if !errors.As(err, &d) {
		t.Fatalf("error %v is not a *Disagreement", err)
	}
	var ms []Mismatch
	for _, a := range d.Aspects {
		ms = append(ms, a.Mismatches...)
	}
	return ms
}

// TestAgreeDSCPCombinations walks every equal/different pattern of the
// three DSCP legs and checks exactly the differing pairs are named.
func TestAgreeDSCPCombinations(t *testing.T) {
	vals := []uint8{8, 46, 10}
	for _, i := range vals {
		for _, tr := range vals {
			for _, c := range vals {
				var want []Mismatch
				for _, p := range []struct {
					a, b   Leg
					va, vb uint8
				}{{LegIntent, LegTrace, i, tr}, {LegIntent, LegCapture, i, c}, {LegTrace, LegCapture, tr, c}} {
					if p.va != p.vb {
						want = append(want, Mismatch{AspectDSCP, p.a, p.b})
					}
				}
				err := Agree(Intent{DSCP: Mark(i)}, uplinkPred(Mark(tr)), Observation{Packets: 10, DSCP: c, Policing: NotPoliced})
				if got := mismatches(t, err); !reflect.DeepEqual(got, want) {
					t.Errorf("intent %d trace %d capture %d: got %v (%v), want %v", i, tr, c, got, err, want)
				}
			}
		}
	}
}

func TestAgreeMeterCombinations(t *testing.T) {
	m1, m2 := &Meter{Rate: 100000, Burst: 5000}, &Meter{Rate: 100000}
	meters := []*Meter{nil, m1, m2}
	verdicts := []Policing{PolicingNotJudged, Policed, NotPoliced}
	for _, in := range meters {
		for _, tr := range meters {
			for _, v := range verdicts {
				pred := uplinkPred(Mark(8))
				if tr != nil {
					pred = uplinkPred(Mark(8), *tr)
				}
				var want []Mismatch
				if !reflect.DeepEqual(in, tr) {
					want = append(want, Mismatch{AspectMeter, LegIntent, LegTrace})
				}
				if v != PolicingNotJudged && (in != nil) != (v == Policed) {
					want = append(want, Mismatch{AspectMeter, LegIntent, LegCapture})
				}
				if v != PolicingNotJudged && (tr != nil) != (v == Policed) {
					want = append(want, Mismatch{AspectMeter, LegTrace, LegCapture})
				}
				err := Agree(Intent{DSCP: Mark(8), Meter: in}, pred, Observation{Packets: 10, DSCP: 8, Policing: v})
				if got := mismatches(t, err); !reflect.DeepEqual(got, want) {
					t.Errorf("intent %v trace %v capture %v: got %v (%v), want %v", in, tr, v, got, err, want)
				}
			}
		}
	}
}

func TestAgreeCases(t *testing.T) {
	dropped := Prediction{Flow: agreeFlow, Deliveries: []Delivery{}}
	flooded := Prediction{Flow: agreeFlow, Deliveries: []Delivery{
		{Output: Output{Port: "ln1", Type: "localnet"}}, {Output: Output{Port: "ln2", Type: "localnet"}}}}
	tests := []struct {
		name    string
		intent  Intent
		pred    Prediction
		obs     Observation
		want    []Mismatch
		wantMsg string
	}{
		{name: "brief example", intent: Intent{DSCP: Mark(8)}, pred: uplinkPred(Mark(46)), obs: Observation{Packets: 5, DSCP: 46},
			want:    []Mismatch{{AspectDSCP, LegIntent, LegTrace}, {AspectDSCP, LegIntent, LegCapture}},
			wantMsg: "flow tenant.blue_ovn_localnet_switch/vm-payments 10.0.0.5 -> 10.20.0.7 tcp:2049: DSCP: intent says DSCP 8, ovn-trace says DSCP 46, capture says DSCP 46: intent≠trace, intent≠capture"},
		{name: "all agree unmarked", pred: uplinkPred(Marking{}), obs: Observation{Packets: 5, Policing: NotPoliced}},
		{name: "unmarked keeps the sent DSCP", pred: uplinkPred(Marking{}), obs: Observation{Packets: 5, DSCP: 10, SentDSCP: 10}},
		{name: "unmarked but capture changed it", pred: uplinkPred(Marking{}), obs: Observation{Packets: 5, DSCP: 10},
			want: []Mismatch{{AspectDSCP, LegIntent, LegCapture}, {AspectDSCP, LegTrace, LegCapture}}},
		{name: "mark 0 is not unmarked for intent vs trace", intent: Intent{DSCP: Mark(0)}, pred: uplinkPred(Marking{}), obs: Observation{Packets: 5},
			want: []Mismatch{{AspectDSCP, LegIntent, LegTrace}}},
		{name: "trace drops, capture sees nothing", intent: Intent{DSCP: Mark(8)}, pred: dropped, obs: Observation{},
			want:    []Mismatch{{AspectOutput, LegIntent, LegTrace}, {AspectOutput, LegIntent, LegCapture}},
			wantMsg: "flow tenant.blue_ovn_localnet_switch/vm-payments 10.0.0.5 -> 10.20.0.7 tcp:2049: output: intent says delivered, ovn-trace says dropped, capture says no packets: intent≠trace, intent≠capture"},
		{name: "trace drops, capture sees packets", intent: Intent{DSCP: Mark(8)}, pred: dropped, obs: Observation{Packets: 3, DSCP: 8},
			want: []Mismatch{{AspectOutput, LegIntent, LegTrace}, {AspectOutput, LegTrace, LegCapture}}},
		{name: "capture empty", intent: Intent{DSCP: Mark(8)}, pred: uplinkPred(Mark(8)), obs: Observation{},
			want: []Mismatch{{AspectOutput, LegIntent, LegCapture}, {AspectOutput, LegTrace, LegCapture}}},
		{name: "two localnet outputs", intent: Intent{DSCP: Mark(8)}, pred: flooded, obs: Observation{Packets: 3, DSCP: 8},
			want: []Mismatch{{AspectOutput, LegIntent, LegTrace}, {AspectOutput, LegTrace, LegCapture}}},
		{name: "two meters on the path", intent: Intent{DSCP: Mark(8), Meter: &Meter{Rate: 10}}, pred: uplinkPred(Mark(8), Meter{Rate: 10}, Meter{Rate: 20}),
			obs: Observation{Packets: 3, DSCP: 8, Policing: Policed}, want: []Mismatch{{AspectMeter, LegIntent, LegTrace}},
			wantMsg: "flow tenant.blue_ovn_localnet_switch/vm-payments 10.0.0.5 -> 10.20.0.7 tcp:2049: meter: intent says meter 10 kbps, ovn-trace says meter 10 kbps + meter 20 kbps, capture says policed: intent≠trace"},
		{name: "dscp and meter both differ", intent: Intent{DSCP: Mark(8), Meter: &Meter{Rate: 100000, Burst: 5000}}, pred: uplinkPred(Mark(46)),
			obs:     Observation{Packets: 3, DSCP: 46, Policing: NotPoliced},
			want:    []Mismatch{{AspectDSCP, LegIntent, LegTrace}, {AspectDSCP, LegIntent, LegCapture}, {AspectMeter, LegIntent, LegTrace}, {AspectMeter, LegIntent, LegCapture}},
			wantMsg: "flow tenant.blue_ovn_localnet_switch/vm-payments 10.0.0.5 -> 10.20.0.7 tcp:2049: DSCP: intent says DSCP 8, ovn-trace says DSCP 46, capture says DSCP 46: intent≠trace, intent≠capture; meter: intent says meter 100000 kbps/5000 kbit, ovn-trace says no meter, capture says not policed: intent≠trace, intent≠capture"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := Agree(tt.intent, tt.pred, tt.obs)
			if got := mismatches(t, err); !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("mismatches = %v (%v), want %v", got, err, tt.want)
			}
			if tt.wantMsg != "" && fmt.Sprint(err) != tt.wantMsg {
				t.Errorf("message =\n%v\nwant\n%s", err, tt.wantMsg)
			}
		})
	}
}

func TestIntentFromRow(t *testing.T) {
	tests := []struct {
		row  *qos.QoSRow
		want Intent
	}{
		{nil, Intent{}},
		{&qos.QoSRow{Action: qos.Action{DSCP: 46}}, Intent{DSCP: Mark(46)}},
		{&qos.QoSRow{Action: qos.Action{DSCP: 0}, Bandwidth: &qos.Bandwidth{Burst: 5}}, Intent{DSCP: Mark(0)}},
		{&qos.QoSRow{Action: qos.Action{DSCP: 8}, Bandwidth: &qos.Bandwidth{Rate: 100000, Burst: 5000}}, Intent{DSCP: Mark(8), Meter: &Meter{Rate: 100000, Burst: 5000}}},
	}
	for _, tt := range tests {
		if got, err := IntentFromRow(tt.row); err != nil || !reflect.DeepEqual(got, tt.want) {
			t.Errorf("IntentFromRow(%+v) = %+v, %v; want %+v", tt.row, got, err, tt.want)
		}
	}
	bad := &qos.QoSRow{Switch: swBlue, Priority: 10700, Action: qos.Action{DSCP: 64}}
	if _, err := IntentFromRow(bad); err == nil || !strings.Contains(err.Error(), "priority 10700 action dscp 64") {
		t.Errorf("IntentFromRow(dscp 64) err = %v, want it named", err)
	}
}

// TestAgreeNotSent: a flow whose sender sent nothing (its peer never
// resolved) compares intent with ovn-trace only; they must still agree.
func TestAgreeNotSent(t *testing.T) {
	obs := Observation{NotSent: "neighbour never resolved"}
	if err := Agree(Intent{DSCP: Mark(46)}, uplinkPred(Mark(46)), obs); err != nil {
		t.Errorf("intent and trace agree, capture not sent: %v", err)
	}
	if err := Agree(Intent{DSCP: Mark(46)}, uplinkPred(Mark(10)), obs); err == nil || !strings.Contains(err.Error(), "DSCP") {
		t.Errorf("intent 46, trace 10, not sent: error %v, want a DSCP disagreement", err)
	}
	if err := Agree(Intent{DSCP: Mark(46)}, uplinkPred(Mark(46)), Observation{}); err == nil || !strings.Contains(err.Error(), "output") {
		t.Errorf("no packets captured though sent: error %v, want an output disagreement", err)
	}
}
