package harness

import (
	"context"

	"github.com/nqos/nqos/scenarios"
)

// stepKind is how the runner executes one kind of step and what it needs
// of the backend beyond the core Env.
type stepKind struct {
	// run is shaped as a method expression of execution.
	run   func(ex *execution, ctx context.Context, i int, st *scenarios.Step) error
	needs []Capability
	// probedNeeds are needed too when the step runs under a probe.
	probedNeeds []Capability
}

// stepKinds is the one table of executable step kinds, by the name
// scenarios.Step.Kind returns (a test checks it against scenarios.Kinds
// and the documentation).
func stepKinds() map[string]stepKind {
	return map[string]stepKind{
		"apply": {run: func(ex *execution, ctx context.Context, _ int, st *scenarios.Step) error {
			return ex.eachObject(st, func(m *scenarios.Manifest) error { return ex.env.Apply(ctx, m) }, ex.world.Apply, "apply")
		}},
		"edit": {run: func(ex *execution, ctx context.Context, _ int, st *scenarios.Step) error {
			return ex.eachObject(st, func(m *scenarios.Manifest) error { return ex.env.Apply(ctx, m) }, ex.world.Apply, "apply")
		}},
		"delete": {run: func(ex *execution, ctx context.Context, _ int, st *scenarios.Step) error {
			return ex.eachObject(st, func(m *scenarios.Manifest) error { return ex.env.Delete(ctx, m) }, ex.world.Remove, "delete")
		}},
		"label": {run: func(ex *execution, ctx context.Context, _ int, st *scenarios.Step) error {
			return ex.label(ctx, st.Label)
		}},
		"startVM": {run: func(ex *execution, ctx context.Context, _ int, st *scenarios.Step) error {
			if st.Probe != nil {
				return ex.startVMsProbed(ctx, st) // appear.go
			}
			return ex.startVMs(ctx, st.StartVM)
		}, probedNeeds: []Capability{CapAdversary}},
		"migrate":           {run: lifecycleRun((*execution).migrateOps), needs: []Capability{CapMigration}}, // lifecycle.go
		"restartLauncher":   {run: lifecycleRun((*execution).restartLauncherOps), needs: []Capability{CapLauncherRestart}},
		"guestIP":           {run: lifecycleRun((*execution).guestIPOps), needs: []Capability{CapGuestIP}},
		"restartDaemon":     {run: lifecycleRun((*execution).restartDaemonOps), needs: []Capability{CapDaemonRestart}},
		"restartController": {run: runController, needs: []Capability{CapControllerProcess}}, // controller_steps.go
		"upgrade":           {run: runController, needs: []Capability{CapControllerProcess}},
		"spoof": {run: func(ex *execution, ctx context.Context, _ int, st *scenarios.Step) error {
			return ex.spoof(ctx, st.Spoof)
		},
			needs: []Capability{CapAdversary}}, // adversarial_steps.go
		"churn": {run: func(ex *execution, ctx context.Context, _ int, st *scenarios.Step) error {
			return ex.churn(ctx, st.Churn)
		},
			needs: []Capability{CapAdversary}}, // churn.go
		"ovnBaseline": {run: func(ex *execution, ctx context.Context, _ int, st *scenarios.Step) error {
			return ex.ovnBaseline(ctx, st.OVNBaseline)
		}, needs: []Capability{CapAdversary}},
		"egress": {run: (*execution).egress, needs: []Capability{CapFabric}}, // fabric.go
		"trustBoundary": {run: func(ex *execution, ctx context.Context, _ int, st *scenarios.Step) error {
			fab, err := ex.fabric()
			if err != nil {
				return err
			}
			return fab.SetTrustBoundary(ctx, st.TrustBoundary.Uplink, !st.TrustBoundary.Clear)
		}, needs: []Capability{CapFabric}},
		"measure":  {run: (*execution).measure, needs: []Capability{CapFabric}}, // fabric_measure.go
		"labTable": {run: (*execution).labTable},                                // fabric_table.go
		"stopZoneController": {run: func(ex *execution, ctx context.Context, _ int, st *scenarios.Step) error {
			return ex.stopZoneController(ctx, st.StopZoneController)
		}, needs: []Capability{CapZones}}, // zone_steps.go
		"startZoneController": {run: func(ex *execution, ctx context.Context, _ int, st *scenarios.Step) error {
			return ex.startZoneController(ctx, st.StartZoneController)
		}, needs: []Capability{CapZones}},
		"start": {run: func(ex *execution, ctx context.Context, i int, st *scenarios.Step) error {
			return ex.start(ctx, i, st.Start)
		}},
		"stop": {run: func(ex *execution, ctx context.Context, _ int, st *scenarios.Step) error {
			return ex.stop(ctx, st.Stop)
		}},
		"wait": {run: func(ex *execution, ctx context.Context, i int, st *scenarios.Step) error {
			return ex.wait(ctx, i, (*scenarios.Check)(st.Wait))
		}},
		"expect": {run: func(ex *execution, ctx context.Context, i int, st *scenarios.Step) error {
			return ex.expect(ctx, i, (*scenarios.Check)(st.Expect))
		}},
	}
}

// lifecycleRun runs a lifecycle step's operations under its probe.
func lifecycleRun(ops func(ex *execution, st *scenarios.Step) []operation) func(*execution, context.Context, int, *scenarios.Step) error {
	return func(ex *execution, ctx context.Context, _ int, st *scenarios.Step) error {
		return ex.lifecycle(ctx, st, ops(ex, st))
	}
}

func runController(ex *execution, ctx context.Context, _ int, st *scenarios.Step) error {
	return ex.controllerStep(ctx, st)
}
