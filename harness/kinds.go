package harness

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/nqos/nqos/scenarios"
)

// stepKind is how the runner executes and describes one kind of step.
type stepKind struct {
	run     func(ctx context.Context, ex *execution, i int, st *scenarios.Step) error
	summary func(st *scenarios.Step) string
}

// stepKinds is the one registry of executable step kinds, by the name
// scenarios.Step.Kind returns.
func stepKinds() map[string]stepKind {
	objects := stepKind{summary: objectsSummary, run: func(ctx context.Context, ex *execution, _ int, st *scenarios.Step) error {
		return ex.eachObject(st, func(m *scenarios.Manifest) error { return ex.env.Apply(ctx, m) }, ex.world.Apply, "apply")
	}}
	deletion := stepKind{summary: objectsSummary, run: func(ctx context.Context, ex *execution, _ int, st *scenarios.Step) error {
		return ex.eachObject(st, func(m *scenarios.Manifest) error { return ex.env.Delete(ctx, m) }, ex.world.Remove, "delete")
	}}
	lifecycle := func(ops func(ex *execution, st *scenarios.Step) []operation, summary func(*scenarios.Step) string) stepKind {
		return stepKind{summary: summary, run: func(ctx context.Context, ex *execution, _ int, st *scenarios.Step) error {
			return ex.lifecycle(ctx, st, ops(ex, st))
		}}
	}
	controller := stepKind{summary: controllerSummary, run: func(ctx context.Context, ex *execution, _ int, st *scenarios.Step) error {
		return ex.controllerStep(ctx, st)
	}}
	adversarial := func(run func(ctx context.Context, ex *execution, st *scenarios.Step) error) stepKind {
		return stepKind{summary: adversarialSummary, run: func(ctx context.Context, ex *execution, _ int, st *scenarios.Step) error { return run(ctx, ex, st) }}
	}
	flows := func(run func(ctx context.Context, ex *execution, i int, names []string) error) stepKind {
		return stepKind{summary: func(st *scenarios.Step) string { return strings.Join(slices.Concat(st.Start, st.Stop), ", ") },
			run: func(ctx context.Context, ex *execution, i int, st *scenarios.Step) error {
				return run(ctx, ex, i, slices.Concat(st.Start, st.Stop))
			}}
	}
	return map[string]stepKind{
		"apply": objects, "edit": objects, "delete": deletion,
		"label": {summary: labelSummary, run: func(ctx context.Context, ex *execution, _ int, st *scenarios.Step) error {
			return ex.label(ctx, st.Label)
		}},
		"startVM": {summary: func(st *scenarios.Step) string { return "VMs " + strings.Join(st.StartVM, ", ") },
			run: func(ctx context.Context, ex *execution, _ int, st *scenarios.Step) error {
				if st.Probe != nil {
					return ex.startVMsProbed(ctx, st) // appear.go
				}
				return ex.startVMs(ctx, st.StartVM)
			}},
		"migrate": lifecycle((*execution).migrateOps, func(st *scenarios.Step) string {
			return fmt.Sprintf("VM %s to node %d (%s)", st.Migrate.VM, st.Migrate.To, st.Migrate.Mode)
		}),
		"restartLauncher": lifecycle((*execution).restartLauncherOps, func(st *scenarios.Step) string { return "VMs " + strings.Join(st.RestartLauncher, ", ") }),
		"guestIP": lifecycle((*execution).guestIPOps, func(st *scenarios.Step) string {
			return fmt.Sprintf("VM %s guest IPv4 %s", st.GuestIP.VM, st.GuestIP.V4)
		}),
		"restartDaemon": lifecycle((*execution).restartDaemonOps, func(st *scenarios.Step) string {
			r := st.RestartDaemon
			return fmt.Sprintf("%s %s on node %d, probe from VM %s", r.Mode, r.Daemon, r.Node, r.VM)
		}),
		"restartController": controller, "upgrade": controller,
		"spoof": adversarial(func(ctx context.Context, ex *execution, st *scenarios.Step) error { return ex.spoof(ctx, st.Spoof) }),
		"churn": adversarial(func(ctx context.Context, ex *execution, st *scenarios.Step) error { return ex.churn(ctx, st.Churn) }),
		"ovnBaseline": adversarial(func(ctx context.Context, ex *execution, st *scenarios.Step) error {
			return ex.ovnBaseline(ctx, st.OVNBaseline)
		}),
		"egress": fabricKind((*execution).egress, egressSummary), "trustBoundary": fabricKind((*execution).trustBoundary, trustSummary), // fabric.go
		"measure": fabricKind((*execution).measure, measureSummary), "labTable": fabricKind((*execution).labTable, labTableSummary),
		"start": flows(func(ctx context.Context, ex *execution, i int, names []string) error { return ex.start(ctx, i, names) }),
		"stop":  flows(func(ctx context.Context, ex *execution, _ int, names []string) error { return ex.stop(ctx, names) }),
		"wait": {summary: func(st *scenarios.Step) string {
			return describeCheck(st.Wait) + fmt.Sprintf(" within %s", st.Wait.Timeout)
		},
			run: func(ctx context.Context, ex *execution, i int, st *scenarios.Step) error {
				return ex.wait(ctx, i, st.Wait)
			}},
		"expect": {summary: func(st *scenarios.Step) string { return describeCheck(st.Expect) },
			run: func(ctx context.Context, ex *execution, i int, st *scenarios.Step) error {
				return ex.expect(ctx, i, st.Expect)
			}},
	}
}

func objectsSummary(st *scenarios.Step) string {
	keys := make([]string, len(st.Objects))
	for i, m := range st.Objects {
		keys[i] = m.Key()
		if m.Revision > 0 {
			keys[i] += fmt.Sprintf(" (revision %d)", m.Revision)
		}
	}
	return strings.Join(keys, ", ")
}

func labelSummary(st *scenarios.Step) string {
	s := fmt.Sprintf("VM %s set %v", st.Label.VM, sortedPairs(st.Label.Set))
	if len(st.Label.Remove) > 0 {
		s += fmt.Sprintf(" remove %v", st.Label.Remove)
	}
	return s
}
