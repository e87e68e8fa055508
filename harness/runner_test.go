package harness

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nqos/nqos/capture"
	"github.com/nqos/nqos/harness/ovntrace"
	"github.com/nqos/nqos/harness/results"
	"github.com/nqos/nqos/scenarios"
)

func runOne(t *testing.T, sc *scenarios.Scenario, prov Provisioner, mode string) (results.Scenario, string) {
	t.Helper()
	var out bytes.Buffer
	r := &Runner{Prov: prov, Dir: t.TempDir(), Mode: mode, Progress: NewProgress(&out, time.Now),
		PollInterval: time.Millisecond}
	run, err := r.Run(context.Background(), "test", []*scenarios.Scenario{sc})
	if err != nil {
		t.Fatal(err)
	}
	return run.Scenarios[0], out.String()
}

// TestBuiltinScenarioChecksAgainstCompiler runs every shipped scenario on
// the compiler-backed simEnv: each condition and NB-row expectation must
// hold for what the real compiler produces (flows are not measured here).
func TestBuiltinScenarioChecksAgainstCompiler(t *testing.T) {
	scs, err := scenarios.Resolve(nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, sc := range scs {
		t.Run(sc.Name, func(t *testing.T) {
			res, _ := runOne(t, sc, &simProv{}, ModeV4)
			for _, st := range res.Steps {
				if st.Status != results.Pass {
					t.Errorf("steps[%d] (line %d) %s %s: %s %s", st.Index, st.Line, st.Kind, st.Summary, st.Status, st.Error)
				}
			}
		})
	}
}

func loadTestdata(t *testing.T, name string) *scenarios.Scenario {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	sc, err := scenarios.Parse(data, name)
	if err != nil {
		t.Fatal(err)
	}
	return sc
}

func TestStepSequence(t *testing.T) {
	sc := loadTestdata(t, "engine.yaml")
	sim := newSim(sc, "23.03.1")
	sim.measure = passingMeasure
	res, progress := runOne(t, sc, &simProv{env: sim}, ModeV4)
	want := []string{
		"apply Namespace vms", "apply NetworkAttachmentDefinition vms/blue", "apply NetworkQoS vms/gold",
		"start [marked/v4]", "finish",
		"apply NetworkQoS vms/gold", "label vm-a", "delete NetworkQoS vms/gold",
	}
	if strings.Join(sim.calls, "\n") != strings.Join(want, "\n") {
		t.Errorf("calls:\n%s\nwant:\n%s", strings.Join(sim.calls, "\n"), strings.Join(want, "\n"))
	}
	if res.Status != results.Pass {
		t.Errorf("status %s: %s", res.Status, res.Error)
	}
	if !sim.closed {
		t.Error("environment not closed")
	}
	if d := res.Duration(); d <= 0 || d > time.Minute {
		t.Errorf("scenario duration %s: Started/Finished not recorded", d)
	}
	if len(res.Flows) != 1 || res.Flows[0].Policer == nil || res.Flows[0].Policer.Meter != "gold/rule1/node1" {
		t.Errorf("flows %+v, want one policed by meter gold/rule1/node1", res.Flows)
	}
	if len(res.Conditions) == 0 || res.Conditions[0].Cond.Reason != "ConfigurationAccepted" {
		t.Errorf("conditions seen %+v", res.Conditions)
	}
	for _, s := range []string{"engine [v4] (1/1)", "step 3/9 apply", "flow marked/v4 PASS", "--- engine [v4] pass"} {
		if !strings.Contains(progress, s) {
			t.Errorf("progress lacks %q:\n%s", s, progress)
		}
	}
	if len(res.NBAfter.QoS) != 0 || len(res.NBBefore.QoS) != 0 {
		t.Errorf("NB before/after: %d/%d QoS rows, want 0/0", len(res.NBBefore.QoS), len(res.NBAfter.QoS))
	}
}

// simFlow is a capture analysis of run: 100 packets with the given DSCP
// at bps in 10 windows of 100 ms.
func simFlow(run FlowRun, dscp uint8, bps float64) *capture.FlowResult {
	t0 := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	w := 100 * time.Millisecond
	fr := &capture.FlowResult{Spec: run.Spec, First: t0, Last: t0.Add(10*w - time.Millisecond)}
	fr.Packets, fr.Bytes, fr.DSCP[dscp] = 100, 150000, 100
	s := &capture.Series{Size: w, Origin: t0}
	for i := range 10 {
		s.Windows = append(s.Windows, capture.Window{Start: t0.Add(time.Duration(i) * w), Packets: 10, Bytes: uint64(bps * w.Seconds() / 8)})
	}
	fr.Series = []*capture.Series{s}
	return fr
}

// passingMeasure returns a measurement consistent with the expectation:
// every packet with the expected DSCP, policed flows at 95% of their meter
// (within the token-bucket bound), others at 95 Mbit/s.
func passingMeasure(run FlowRun) Measured {
	var dscp uint8
	if run.Expect.DSCP != nil && !run.Expect.Unmarked {
		dscp = uint8(*run.Expect.DSCP)
	}
	bps := 95e6
	var meter *capture.Bucket
	if e := run.Expect; e.Policed() {
		bps = 0.95 * e.RateBits()
		meter = &capture.Bucket{Key: e.MeterKey(run.Spec.Name), Flows: []string{run.Spec.Name}, RateBits: e.RateBits(), BurstBits: e.BurstBits(),
			Packets: 100, MaxExcessBits: e.BurstBits() / 2, MaxFrameBits: 12000}
	}
	return Measure(simFlow(run, dscp, bps), meter, nil)
}

func TestApplyErrorStopsScenario(t *testing.T) {
	sc := loadTestdata(t, "engine.yaml")
	sim := newSim(sc, "23.03.1")
	sim.failOn = "apply NetworkQoS vms/gold"
	res, _ := runOne(t, sc, &simProv{env: sim}, ModeV4)
	if res.Status != results.Error || !strings.Contains(res.Error, "apply NetworkQoS vms/gold (manifest gold revision 0): injected failure") {
		t.Errorf("status %s error %q", res.Status, res.Error)
	}
	if res.Steps[2].Status != results.Fail || res.Steps[3].Status != results.NotRun {
		t.Errorf("steps %+v", res.Steps)
	}
	if len(res.Logs) == 0 || !sim.closed {
		t.Errorf("logs %d, closed %v: want logs on failure and a closed environment", len(res.Logs), sim.closed)
	}
}

// A step the backend cannot run makes the step and the scenario
// "unsupported", never a pass, and the rest not run; so does a topology
// the backend cannot provision. A plain failure stays an error.
func TestNotSupportedIsReportedNotPassed(t *testing.T) {
	sc := loadTestdata(t, "engine.yaml")
	sim := newSim(sc, "25.03.0")
	sim.failOn, sim.unsupported = "apply NetworkQoS vms/gold", true
	res, _ := runOne(t, sc, &simProv{env: sim}, ModeV4)
	if res.Status != results.Unsupported || !strings.Contains(res.Error, "not supported by the sim backend: apply NetworkQoS vms/gold") {
		t.Errorf("status %s error %q: want unsupported, naming the call", res.Status, res.Error)
	}
	if res.Steps[2].Status != results.Unsupported || res.Steps[3].Status != results.NotRun {
		t.Errorf("steps %+v: want the step unsupported and the rest not run", res.Steps)
	}
	res, _ = runOne(t, sc, &simProv{err: fmt.Errorf("testbed: %w", &NotSupportedError{Backend: "sim", What: "3 nodes"})}, ModeV4)
	if res.Status != results.Unsupported {
		t.Errorf("provision not supported: status %s, want unsupported", res.Status)
	}
	res, _ = runOne(t, sc, &simProv{err: errors.New("boot failed")}, ModeV4)
	if res.Status != results.Error {
		t.Errorf("provision failure: status %s, want error", res.Status)
	}
	run := &results.Run{Scenarios: []results.Scenario{{Status: results.Unsupported}, {Status: results.Pass}}}
	if c := run.Summary(); c.Unsupported != 1 || c.Passed != 1 || c.Skipped != 0 {
		t.Errorf("summary %+v: want 1 unsupported, 1 passed", c)
	}
}

// A daemon the testbed restarted after a crash is named in the
// scenario's notes with its logs attached, whatever the verdicts; logs
// that cannot be read fail the scenario.
func TestDaemonCrashReported(t *testing.T) {
	sc := loadTestdata(t, "engine.yaml")
	sim := newSim(sc, "25.03.0")
	sim.crashes = []string{"node1-ovn-controller.log: |EMER|lib/ovsdb-idl.c:3598: assertion row->new_datum != NULL failed"}
	res, _ := runOne(t, sc, &simProv{env: sim}, ModeV4)
	want := "daemon crash (the testbed restarted the daemon): " + sim.crashes[0]
	if res.Status != results.Pass || !slices.Contains(res.Notes, want) || len(res.Logs) == 0 {
		t.Errorf("status %s, notes %q, %d logs: want pass, the crash noted, logs attached", res.Status, res.Notes, len(res.Logs))
	}
	sim = newSim(sc, "25.03.0")
	sim.crashErr = fmt.Errorf("read node1-ovn-controller.log: permission denied")
	res, _ = runOne(t, sc, &simProv{env: sim}, ModeV4)
	if res.Status == results.Pass || !strings.Contains(res.Error, "daemon crashes: read node1-ovn-controller.log") {
		t.Errorf("status %s error %q: want the unreadable log to fail the scenario", res.Status, res.Error)
	}
}

func TestWaitTimesOutWithMismatch(t *testing.T) {
	sc := loadTestdata(t, "wait-timeout.yaml")
	res, progress := runOne(t, sc, &simProv{}, ModeV4)
	if res.Status != results.Fail {
		t.Fatalf("status %s, want fail", res.Status)
	}
	if !strings.Contains(progress, "\nFAIL scenario wait-timeout: conditions\n") || strings.Contains(progress, "nb-rows") {
		t.Errorf("progress lacks exactly the failure line for conditions:\n%s", progress)
	}
	for _, s := range []string{"not met within 50ms", "NetworkQoS vms/gold Accepted is False/UnsupportedDestinationSelector, want True/"} {
		if !strings.Contains(res.Error, s) {
			t.Errorf("error %q lacks %q", res.Error, s)
		}
	}
}

func TestFlowVerdictFailureFailsScenario(t *testing.T) {
	sc := loadTestdata(t, "engine.yaml")
	sim := newSim(sc, "23.03.1")
	sim.measure = func(run FlowRun) Measured {
		m := passingMeasure(run)
		m.Flow.DSCP[*run.Expect.DSCP], m.Flow.DSCP[0] = 99, 1 // one packet left unmarked
		return m
	}
	res, progress := runOne(t, sc, &simProv{env: sim}, ModeV4)
	if res.Status != results.Fail || !strings.Contains(res.Error, "flow marked/v4 failed") {
		t.Errorf("status %s error %q", res.Status, res.Error)
	}
	if !strings.Contains(progress, "\nFAIL scenario engine: dscp\n") {
		t.Errorf("progress lacks the failure line for dscp:\n%s", progress)
	}
	if res.Steps[len(res.Steps)-1].Status != results.Pass {
		t.Error("a flow verdict must not abort the remaining steps")
	}
}

func TestOVNVersionSelectsExpectations(t *testing.T) {
	sc := loadTestdata(t, "engine.yaml")
	for _, tc := range []struct {
		ovn        string
		policed    bool
		throughput int
	}{{"23.03.1", true, 0}, {"24.09.0", false, 1}} {
		sim := newSim(sc, tc.ovn)
		sim.measure = passingMeasure
		res, _ := runOne(t, sc, &simProv{env: sim}, ModeV4)
		f := res.Flows[0]
		if (f.Policer != nil) != tc.policed {
			t.Errorf("OVN %s: policer %+v, want policed=%v", tc.ovn, f.Policer, tc.policed)
		}
		n := 0
		for _, v := range f.Verdicts {
			if v.Property == "throughput" {
				n++
			}
		}
		if n != tc.throughput {
			t.Errorf("OVN %s: %d throughput verdicts, want %d", tc.ovn, n, tc.throughput)
		}
	}
}

func TestAuditViolationFailsScenario(t *testing.T) {
	sc := loadTestdata(t, "engine.yaml")
	sc.Invariants.NBAudit = true
	sim := newSim(sc, "23.03.1")
	sim.measure = passingMeasure
	sim.audit = func() []Sighting {
		if len(sim.rows().QoS) > 0 {
			return []Sighting{{At: time.Now(), Row: "qos 1", Problem: "references missing port group @a1"}}
		}
		return nil
	}
	res, progress := runOne(t, sc, &simProv{env: sim}, ModeV4)
	if res.Status != results.Fail || len(res.Violations) != 1 || !strings.Contains(res.Error, "NB invariant violated") ||
		!strings.Contains(res.Violations[0], "qos 1: references missing port group @a1") {
		t.Errorf("status %s error %q violations %v", res.Status, res.Error, res.Violations)
	}
	// one audit of the initial state, then one per apply, edit, label and delete
	if want := 1 + 6; res.NBChecks != want {
		t.Errorf("%d NB states audited, want %d", res.NBChecks, want)
	}
	if !strings.Contains(progress, "\nFAIL scenario engine: nb-audit\n") {
		t.Errorf("progress lacks the failure line for nb-audit:\n%s", progress)
	}
}

func TestFamilyModes(t *testing.T) {
	sc := loadTestdata(t, "engine.yaml") // ipFamilies: [v4]
	prov := &simProv{}
	res, _ := runOne(t, sc, prov, ModeV6)
	if res.Status != results.Skipped || res.SkipReason == "" {
		t.Errorf("v6 run of a v4 scenario: status %s reason %q, want skipped", res.Status, res.SkipReason)
	}
	if _, err := Families("v5"); err == nil {
		t.Error("mode v5 accepted")
	}
	sim := newSim(sc, "23.03.1")
	sim.measure = passingMeasure
	res, _ = runOne(t, sc, &simProv{env: sim}, ModeDual)
	if res.Status != results.Pass || !slices.Equal(res.Families, []string{"v4"}) || len(res.Flows) != 1 || res.Flows[0].Family != "v4" {
		t.Errorf("dual run of a v4 scenario: status %s (%s%s), families %v, %d flows; want it run in v4 only",
			res.Status, res.SkipReason, res.Error, res.Families, len(res.Flows))
	}
}

func TestIPAMFilter(t *testing.T) {
	sc := loadTestdata(t, "engine.yaml") // one network, ipam: none
	for _, tc := range []struct {
		ipam string
		skip bool
	}{{"", false}, {IPAMAll, false}, {IPAMIpamless, false}, {IPAMOVNK, true}, {IPAMDHCP, true}} {
		sim := newSim(sc, "23.03.1")
		sim.measure = passingMeasure
		r := &Runner{Prov: &simProv{env: sim}, Dir: t.TempDir(), Mode: ModeV4, IPAM: tc.ipam, PollInterval: time.Millisecond}
		run, err := r.Run(context.Background(), "test", []*scenarios.Scenario{sc})
		if err != nil {
			t.Fatal(err)
		}
		res := run.Scenarios[0]
		if skipped := res.Status == results.Skipped; skipped != tc.skip {
			t.Errorf("--ipam %q: status %s (%s), want skipped=%v", tc.ipam, res.Status, res.SkipReason, tc.skip)
		}
		if tc.skip && !strings.Contains(res.SkipReason, "no network with ipam") {
			t.Errorf("--ipam %q: skip reason %q", tc.ipam, res.SkipReason)
		}
	}
	r := &Runner{Prov: &simProv{}, Dir: t.TempDir(), IPAM: "static"}
	if _, err := r.Run(context.Background(), "test", []*scenarios.Scenario{sc}); err == nil || !strings.Contains(err.Error(), `invalid IPAM mode "static"`) {
		t.Errorf("--ipam static: error %v", err)
	}
}

func TestDualRunsFamiliesOneAfterTheOther(t *testing.T) {
	sc := loadTestdata(t, "engine.yaml")
	sc.Families = []scenarios.Family{scenarios.V4, scenarios.V6}
	sim := newSim(sc, "23.03.1")
	sim.measure = passingMeasure
	res, _ := runOne(t, sc, &simProv{env: sim}, ModeDual)
	got := strings.Join(sim.calls, "\n")
	if !strings.Contains(got, "start [marked/v4]\nfinish\nstart [marked/v6]\nfinish") {
		t.Errorf("calls:\n%s\nwant the v4 wave finished before the v6 wave starts", got)
	}
	if len(res.Flows) != 2 || res.Flows[0].Family != "v4" || res.Flows[1].Family != "v6" {
		t.Errorf("flows %+v", res.Flows)
	}
}

// TestThreeWay runs the simulation tier on the compiler-backed simEnv with
// a scripted ovn-trace answer: it agrees with the compiled intent (rule 1,
// priority 10501: DSCP 8 and its meter, the capture saw DSCP 8), then a
// prediction of DSCP 46, or a capture that saw 250 Mbit/s through the
// 100 Mbit/s meter, must fail the scenario naming the disagreeing legs.
func TestThreeWay(t *testing.T) {
	sc := loadTestdata(t, "engine.yaml")
	for _, tc := range []struct {
		name      string
		dscp      uint8
		rate      float64 // steady rate the capture saw
		capture   string
		agree     bool
		wantPairs string
	}{
		{"agree", 8, 95e6, "100 packets DSCP 8, policed", true, ""},
		{"trace-disagrees", 46, 95e6, "100 packets DSCP 8, policed", false, "DSCP: intent says DSCP 8, ovn-trace says DSCP 46, capture says DSCP 8: intent≠trace, trace≠capture"},
		{"capture-not-policed", 8, 250e6, "100 packets DSCP 8, not policed", false, "capture says not policed: intent≠capture, trace≠capture"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sim := newSim(sc, "23.03.1")
			sim.measure = func(run FlowRun) Measured {
				m := passingMeasure(run)
				for i := range m.Rate {
					m.Rate[i] = tc.rate
				}
				return m
			}
			sim.trace = func(run FlowRun) (ovntrace.Prediction, error) {
				rows := sim.rows().QoS
				if len(rows) == 0 {
					return ovntrace.Prediction{}, fmt.Errorf("no rows to trace %s against", run.Name)
				}
				return ovntrace.Prediction{
					Flow: ovntrace.Microflow{Datapath: rows[0].Switch, InPort: "vm-a-port", Src: run.Spec.SrcIP, Dst: run.Spec.DstIP, Proto: ovntrace.ProtoUDP, DstPort: run.Spec.DstPort},
					Deliveries: []ovntrace.Delivery{{Output: ovntrace.Output{Port: "ln-blue", Type: "localnet"},
						DSCP: ovntrace.Mark(tc.dscp), Meters: []ovntrace.Meter{{Rate: 100000, Burst: 5000}}}},
				}, nil
			}
			res, progress := runOne(t, sc, &simProv{env: sim}, ModeV4)
			if len(res.Flows) != 1 || res.Flows[0].ThreeWay == nil {
				t.Fatalf("flows %+v, want one with a three-way entry", res.Flows)
			}
			tw := res.Flows[0].ThreeWay
			if tw.Agree != tc.agree || tw.Intent != "DSCP 8, meter 100000 kbps/5000 kbit" || len(tw.IntentRow) != 1 ||
				!strings.Contains(tw.IntentRow[0], "priority 10501") || tw.Capture != tc.capture {
				t.Errorf("three-way %+v", tw)
			}
			failLine := strings.Contains(progress, "\nFAIL scenario engine: three-way\n")
			if tc.agree == failLine || (res.Status == results.Pass) != tc.agree {
				t.Errorf("status %s, failure line %v:\n%s", res.Status, failLine, progress)
			}
			if !strings.Contains(tw.Detail, tc.wantPairs) {
				t.Errorf("detail %q lacks %q", tw.Detail, tc.wantPairs)
			}
		})
	}
}

// TestTeardownErrorAlwaysReported: a testbed that fails to tear down is
// reported for a passed scenario (which becomes an error) and for a
// failed one (which stays failed, its error naming both).
func TestTeardownErrorAlwaysReported(t *testing.T) {
	for _, c := range []struct {
		name, failOn string
		want         results.Status
	}{
		{"passed", "", results.Error},
		{"failed", "label vm-a", results.Error}, // an injected env failure is an error
	} {
		t.Run(c.name, func(t *testing.T) {
			sc := loadTestdata(t, "engine.yaml")
			sim := newSim(sc, "23.03.1")
			sim.measure, sim.failOn, sim.closeErr = passingMeasure, c.failOn, errors.New("netns busy")
			res, _ := runOne(t, sc, &simProv{env: sim}, ModeV4)
			if res.Status != c.want || !strings.Contains(res.Error, "tear down testbed of "+sc.Name+": netns busy") {
				t.Errorf("status %s, error %q: want %s with the teardown error", res.Status, res.Error, c.want)
			}
			if c.failOn != "" && !strings.Contains(res.Error, "injected failure") {
				t.Errorf("error %q lost the step's failure", res.Error)
			}
		})
	}
}

// TestTeardownErrorKeepsFailStatus: a scenario that failed an
// expectation keeps status fail and reports the teardown error too.
func TestTeardownErrorKeepsFailStatus(t *testing.T) {
	res := results.Scenario{Status: results.Fail, Error: "flow x/v4 failed its expectations"}
	reportTeardown(&res, "s", errors.New("busy"))
	if res.Status != results.Fail || res.Error != "flow x/v4 failed its expectations; tear down testbed of s: busy" {
		t.Errorf("got %s %q", res.Status, res.Error)
	}
	reportTeardown(&res, "s", nil)
	if !strings.HasSuffix(res.Error, "busy") {
		t.Errorf("a nil teardown error changed the result: %q", res.Error)
	}
}

// TestInterruptMarksRemainingScenarios: cancelling the run during the
// first scenario stops it (interrupted, torn down) and marks the others
// interrupted without provisioning them.
func TestInterruptMarksRemainingScenarios(t *testing.T) {
	sc := loadTestdata(t, "engine.yaml")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	sim := newSim(sc, "23.03.1")
	sim.measure = passingMeasure
	sim.onCall = func(call string) {
		if call == "label vm-a" {
			cancel()
		}
	}
	prov := &simProv{env: sim}
	var out bytes.Buffer
	r := &Runner{Prov: prov, Dir: t.TempDir(), Mode: ModeV4, Progress: NewProgress(&out, time.Now), PollInterval: time.Millisecond}
	run, err := r.Run(ctx, "test", []*scenarios.Scenario{sc, sc, sc})
	if err != nil {
		t.Fatal(err)
	}
	if prov.provisioned != 1 || prov.cancelled != 0 {
		t.Errorf("provisioned %d scenarios (%d with a cancelled context), want only the first", prov.provisioned, prov.cancelled)
	}
	if !sim.closed {
		t.Error("the interrupted scenario's testbed was not torn down")
	}
	for i, s := range run.Scenarios {
		if s.Status != results.Interrupted {
			t.Errorf("scenario %d: status %s (%s), want interrupted", i, s.Status, s.Error)
		}
	}
	if c := run.Summary(); c.Interrupted != 3 || run.OK() {
		t.Errorf("summary %+v, OK %v: want 3 interrupted and not OK", c, run.OK())
	}
	if !strings.Contains(out.String(), "interrupted before this scenario started") {
		t.Errorf("progress does not say the others were not started:\n%s", out.String())
	}
}

// TestTeardownsRunOnce: a forced teardown and the runner's own run the
// environment's Close once; both get its error, and a removed teardown
// is not run again.
func TestTeardownsRunOnce(t *testing.T) {
	var tds Teardowns
	var mu sync.Mutex
	calls := 0
	td, remove := tds.Add(func() error {
		mu.Lock()
		defer mu.Unlock()
		calls++
		return errors.New("busy")
	})
	if tds.Len() != 1 {
		t.Fatalf("%d teardowns registered, want 1", tds.Len())
	}
	var wg sync.WaitGroup
	errs := make([]error, 2)
	wg.Add(2)
	go func() { defer wg.Done(); errs[0] = tds.Run() }()
	go func() { defer wg.Done(); errs[1] = td() }()
	wg.Wait()
	remove()
	if calls != 1 || errs[0] == nil || errs[1] == nil {
		t.Errorf("Close ran %d times, errors %v: want once, both callers get its error", calls, errs)
	}
	if err := tds.Run(); err != nil || tds.Len() != 0 {
		t.Errorf("after remove: Run = %v, %d registered", err, tds.Len())
	}
}
