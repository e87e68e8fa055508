package harness

import (
	"context"
	"fmt"
	"strings"

	"github.com/nqos/nqos/harness/lifeprobe"
	"github.com/nqos/nqos/harness/verdict"

	"github.com/nqos/nqos/scenarios"
)

// killInFlight is how many transactions of a SIGKILLed controller may
// still commit after it is gone: one per reconcile worker
// (internal/controller runs 8) already sent when the signal lands. A
// graceful stop leaves none.
const killInFlight = 8

// ControllerRestart is one controller restart.
type ControllerRestart struct {
	Mode string // scenarios.ControllerGraceful or ControllerKill9
	// Burst, if set, runs concurrently with the restart: the object
	// changes the controller is reconciling. With AfterTx > 0 the
	// controller is stopped right after the AfterTx-th NB transaction
	// since the burst began.
	Burst   func(ctx context.Context) error
	AfterTx int
}

// ControllerResult is what a controller step measured.
type ControllerResult struct {
	lifeprobe.Outcome
	Divergence
	// TxWhileDown counts NB transactions between the old process's exit
	// and the new one's start (restartController).
	TxWhileDown int
	// OrderErrors are the ways the legacy migration broke its order
	// (upgrade).
	OrderErrors []string
}

// Divergence is how the NB still differed from the compiler's rows for
// the cluster's objects when a controller came back and the convergence
// deadline passed (none: converged): Missing and Extra rows (Extra holds
// orphans and duplicates) and Problems, the NB audit's findings then
// (dangling references, duplicate ids, rows off every switch).
type Divergence struct {
	Missing, Extra, Problems []string
}

// judge adds the divergence to mism; who names the controller that came
// back.
func (d Divergence) judge(mism *verdict.Mismatches, who string) {
	if len(d.Missing)+len(d.Extra) > 0 {
		mism.Add(verdict.Rows, fmt.Sprintf("after %s came back the NB differs from the compiler's rows: %d missing %v, %d extra (orphans, duplicates) %v",
			who, len(d.Missing), d.Missing, len(d.Extra), d.Extra))
	}
	if len(d.Problems) > 0 {
		mism.Add(verdict.Rows, fmt.Sprintf("NB audit after %s came back: %s", who, strings.Join(d.Problems, "; ")))
	}
}

// controllerStep runs a restartController or upgrade step and judges it.
func (ex *execution) controllerStep(ctx context.Context, st *scenarios.Step) error {
	var (
		res ControllerResult
		err error
		vm  *scenarios.VM
	)
	cp, err := capable[ControllerProcess](ex, CapControllerProcess)
	if err != nil {
		return err
	}
	if u := st.Upgrade; u != nil {
		vm = ex.sc.VM(u.VM)
		res, err = cp.Upgrade(ctx, u.Objects, vm, st.Probe)
	} else {
		r := st.RestartController
		vm = ex.sc.VM(r.VM)
		spec := ControllerRestart{Mode: r.Mode, AfterTx: r.AfterTx}
		if len(r.Applied)+len(r.Deleted) > 0 {
			spec.Burst = ex.burst(r)
		}
		res, err = cp.RestartController(ctx, spec, vm, st.Probe)
	}
	if err != nil {
		return fmt.Errorf("%s (probe VM %s): %w", st.Kind(), vm.Name, err)
	}
	ex.measures, ex.detail = res.Measures, res.Detail
	ex.verdicts = probeVerdicts(vm.Name, res.Outcome, st.Probe)
	if m := judgeController(vm.Name, st, res); len(m) > 0 {
		return m.Failure("")
	}
	return nil
}

// burst applies, then deletes, the step's manifests one after the other
// and records each change in the world.
func (ex *execution) burst(r *scenarios.RestartController) func(context.Context) error {
	return func(ctx context.Context) error {
		for _, m := range r.Applied {
			if err := ex.env.Apply(ctx, m); err != nil {
				return fmt.Errorf("apply %s: %w", m.Key(), err)
			}
			ex.world.Apply(m)
		}
		for _, m := range r.Deleted {
			if err := ex.env.Delete(ctx, m); err != nil {
				return fmt.Errorf("delete %s: %w", m.Key(), err)
			}
			ex.world.Remove(m)
		}
		return nil
	}
}

// judgeController checks the probe (unmarked, lost, gap), the NB against
// the compiler's rows, the writers while no controller ran and the
// migration order.
func judgeController(vm string, st *scenarios.Step, res ControllerResult) verdict.Mismatches {
	var mism verdict.Mismatches
	mism.Judge(probeVerdicts(vm, res.Outcome, st.Probe)...)
	res.judge(&mism, "the controller")
	if r := st.RestartController; r != nil {
		allowed := 0
		if r.Mode == scenarios.ControllerKill9 {
			allowed = killInFlight
		}
		if res.TxWhileDown > allowed {
			mism.Add(verdict.Writers, fmt.Sprintf("%d NB transactions while no controller ran, at most %d allowed after %s", res.TxWhileDown, allowed, r.Mode))
		}
	}
	mism.Add(verdict.Migration, res.OrderErrors...)
	return mism
}

func (kindTable) RestartController() stepKind {
	return stepKind{name: "restartController", run: runController, needs: []Capability{CapControllerProcess}}
}

func (kindTable) Upgrade() stepKind {
	return stepKind{name: "upgrade", run: runController, needs: []Capability{CapControllerProcess}}
}

func runController(ex *execution, ctx context.Context, _ int, st *scenarios.Step) error {
	return ex.controllerStep(ctx, st)
}
