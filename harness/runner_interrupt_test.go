package harness

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nqos/nqos/harness/results"
	"github.com/nqos/nqos/scenarios"
)

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
