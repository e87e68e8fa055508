package verify

import (
	"context"
	"fmt"

	"github.com/nqos/nqos/harness"
	"github.com/nqos/nqos/harness/results"
	"github.com/nqos/nqos/scenarios"
)

// Run runs the plan's scenario with r (the harness runner on the real
// testbed) and judges its probes. The testbed must run the OVN release
// the plan's intent was computed for.
func Run(ctx context.Context, plan *Plan, r *harness.Runner, id string) (*Report, *results.Run, error) {
	run, err := r.Run(ctx, id, []*scenarios.Scenario{plan.Scenario})
	if err != nil {
		return nil, nil, err
	}
	if len(run.Scenarios) == 1 && run.Scenarios[0].Error != "" && run.OVNVersion == "" {
		return nil, run, fmt.Errorf("verify: the testbed did not run: %s", run.Scenarios[0].Error)
	}
	if run.OVNVersion != plan.OVN {
		return nil, run, fmt.Errorf("verify: the testbed ran OVN %s, the intent is for %s", run.OVNVersion, plan.OVN)
	}
	rep, err := FromResults(plan, run)
	return rep, run, err
}
