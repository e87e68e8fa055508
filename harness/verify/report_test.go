package verify

import (
	"bytes"
	"encoding/json"
	"net/netip"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nqos/nqos/internal/golden"

	"github.com/nqos/nqos/harness/results"
	"github.com/nqos/nqos/harness/verdict"
)

func ptr[T any](v T) *T { return &v }

func addr(s string) netip.Addr { return netip.MustParseAddr(s) }

// goldenPlan is two classes of one VM: a metered backup class with its
// overload and an unmarked class.
func goldenPlan() *Plan {
	return &Plan{OVN: "23.03.1",
		Shadowed: []Shadowed{{VM: "vms/pay-1", Rule: "vms/tier-production#0", By: "vms/backup#0", Consequence: "mark (DSCP 46) lost"}},
		Probes: []Probe{
			{Class: Class{VM: "vms/pay-1", Family: V4, Src: addr("10.10.0.21"), Dst: addr("10.20.0.1"), Protocol: "udp", Port: 2049},
				Flow: "p001", Overload: "o001",
				Intent: Intent{DSCP: ptr(8), MeterKbps: ptr(uint32(100000)), Rule: ptr("vms/backup#1"), MeterRule: "vms/backup#1"}},
			{Class: Class{VM: "vms/latency-1", Family: V4, Src: addr("10.10.0.31"), Dst: addr("10.0.0.1"), Protocol: "udp", Port: 5201},
				Flow: "p002"},
		}}
}

func passing(name string) []verdict.Verdict {
	return []verdict.Verdict{{Subject: name, Property: verdict.DSCP, Pass: true}, {Property: verdict.ThreeWay, Pass: true}}
}

func goldenRun() *results.Run {
	return &results.Run{OVNVersion: "23.03.1", Scenarios: []results.Scenario{{Name: "verify", Flows: []results.Flow{
		{Name: "p001", Family: "v4", Protocol: "udp", Packets: 200, DSCP: []results.DSCPCount{{DSCP: 8, Packets: 200}},
			Verdicts: passing("p001/v4"), ThreeWay: &results.ThreeWay{Agree: true, Predicted: &results.Predicted{DSCP: ptr(8), Metered: true}}},
		{Name: "o001", Family: "v4", Protocol: "udp", OfferedBps: 250e6, Rate: []float64{5e6, 99.7e6, 99.9e6, 3e6},
			Packets: 30000, DSCP: []results.DSCPCount{{DSCP: 8, Packets: 30000}},
			Verdicts: passing("o001/v4"), ThreeWay: &results.ThreeWay{Agree: true, Predicted: &results.Predicted{DSCP: ptr(8), Metered: true}}},
		{Name: "p002", Family: "v4", Protocol: "udp", Packets: 200, DSCP: []results.DSCPCount{{DSCP: 0, Packets: 200}},
			Verdicts: passing("p002/v4"), ThreeWay: &results.ThreeWay{Agree: true, Predicted: &results.Predicted{}}},
	}}}}
}

func TestReportJSONGolden(t *testing.T) {
	rep, err := FromResults(goldenPlan(), goldenRun())
	if err != nil {
		t.Fatal(err)
	}
	if !rep.OK() || rep.Summary != (Summary{Probes: 2, Agree: 2}) {
		t.Fatalf("summary %+v, failures %v", rep.Summary, rep.Failures)
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetIndent("", "  ")
	if err := enc.Encode(rep); err != nil {
		t.Fatal(err)
	}
	golden.Check(t, filepath.Join("testdata", "report.golden.json"), buf.Bytes())
	var text bytes.Buffer
	if err := WriteText(&text, rep); err != nil {
		t.Fatal(err)
	}
	golden.Check(t, filepath.Join("testdata", "report.golden.txt"), text.Bytes())
}

func TestReportDisagreements(t *testing.T) {
	cases := []struct {
		name   string
		mutate func(*results.Run)
		want   string
	}{
		{"a failed verdict", func(r *results.Run) {
			r.Scenarios[0].Flows[0].Verdicts[0] = verdict.Verdict{Property: verdict.DSCP, Message: "FAIL p001/v4 dscp: 200 packets DSCP 46, want 8"}
		}, "FAIL p001/v4 dscp"},
		{"three legs disagree", func(r *results.Run) {
			r.Scenarios[0].Flows[2].ThreeWay = &results.ThreeWay{Detail: "ovn-trace says DSCP 46, intent unmarked"}
		}, "ovn-trace says DSCP 46"},
		{"no three-way judgement is no agreement", func(r *results.Run) { r.Scenarios[0].Flows[2].ThreeWay = nil }, "no three-way judgement"},
		{"a probe flow that did not run", func(r *results.Run) { r.Scenarios[0].Flows = r.Scenarios[0].Flows[:2] }, "probe flow p002 did not run"},
		{"an overload that did not run", func(r *results.Run) {
			fs := r.Scenarios[0].Flows
			r.Scenarios[0].Flows = []results.Flow{fs[0], fs[2]}
		}, "overload flow o001 did not run"},
		{"an overload whose bound failed", func(r *results.Run) {
			r.Scenarios[0].Flows[1].Verdicts[0] = verdict.Verdict{Property: verdict.PolicingBound, Message: "FAIL o001/v4 policing-bound"}
		}, "overload: FAIL o001/v4 policing-bound"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			run := goldenRun()
			tc.mutate(run)
			rep, err := FromResults(goldenPlan(), run)
			if err != nil {
				t.Fatal(err)
			}
			if rep.OK() || rep.Summary.Agree != 1 || len(rep.Failures) != 1 || !strings.Contains(rep.Failures[0], tc.want) {
				t.Fatalf("summary %+v, failures %q, want one containing %q", rep.Summary, rep.Failures, tc.want)
			}
		})
	}
	if _, err := FromResults(goldenPlan(), &results.Run{}); err == nil {
		t.Error("a run without the scenario's result gave a report")
	}
}

func TestFullRoundTrip(t *testing.T) {
	rep, err := FromResults(goldenPlan(), goldenRun())
	if err != nil {
		t.Fatal(err)
	}
	data, err := json.Marshal(rep.Full())
	if err != nil {
		t.Fatal(err)
	}
	var f Full
	if err := json.Unmarshal(data, &f); err != nil {
		t.Fatal(err)
	}
	back := f.Restore()
	if back.Probes[1].Intent.MeterRule != "vms/backup#1" || back.Shadowed[0].Consequence != "mark (DSCP 46) lost" {
		t.Fatalf("restored %+v", back)
	}
}
