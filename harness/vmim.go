package harness

import (
	"context"
	"fmt"

	"github.com/nqos/nqos/harness/results"
	"github.com/nqos/nqos/harness/verdict"
	"github.com/nqos/nqos/scenarios"
	"github.com/nqos/nqos/scenarios/manifests"
)

// migrationNeeds: an apply step creating a VirtualMachineInstanceMigration
// needs the migration capability.
func migrationNeeds(st *scenarios.Step) []Capability {
	if st.VMIM != nil {
		return []Capability{CapMigration}
	}
	return nil
}

// applyMigration runs an apply step of a VirtualMachineInstanceMigration
// as KubeVirt does: it decides from the world as the steps left it
// (whether the VMI runs, where every VM is) whether the admission
// webhook denies the object (not created) or the scheduler finds no
// target (created, status Failed), else creates it, live-migrates the
// VMI through the same machinery as a migrate step under the step's
// probe and records status Succeeded. The outcome is judged against the
// step's refused expectation (property migration).
func (ex *execution) applyMigration(ctx context.Context, st *scenarios.Step) error {
	x := st.VMIM
	running := x.VM != "" && !ex.world.Absent(x.VM)
	load := map[int]int{}
	for _, vm := range ex.sc.Topology.VMs {
		if !ex.world.Absent(vm.Name) {
			load[ex.world.Node(vm.Name)]++
		}
	}
	to, refusal := x.Decide(running, ex.world.Node(x.VM), load)
	if refusal != nil {
		return ex.refuseMigration(ctx, st, refusal)
	}
	if st.Refused != nil {
		return migrationMismatch(fmt.Sprintf("%s: expected refused (%q), but KubeVirt migrates VMI %s to node %d",
			x.Manifest.Key(), st.Refused.Reason, x.Migration.VMIKey(), to))
	}
	if err := ex.env.Apply(ctx, x.Manifest); err != nil {
		return fmt.Errorf("create %s: %w", x.Manifest.Key(), err)
	}
	m := &scenarios.Migrate{VM: x.VM, To: to, Mode: x.Mode}
	ex.measures = append(ex.measures, results.Measure{Name: "target node (scheduler)", Note: fmt.Sprintf("node %d (%s), %s", to, x.Nodes[to].Name, x.Mode)})
	err := ex.lifecycle(ctx, st, ex.migrationOps(st, m))
	phase, reason := "Succeeded", ""
	if err != nil {
		phase, reason = "Failed", err.Error()
	}
	if serr := ex.migrationStatus(ctx, x.Manifest, phase, reason, x.Nodes[to].Name); serr != nil && err == nil {
		err = serr
	}
	return err
}

// refuseMigration records a refusal: the object is created (status
// Failed with KubeVirt's message) unless the admission webhook denied
// it; it passes only when the step expects this refusal.
func (ex *execution) refuseMigration(ctx context.Context, st *scenarios.Step, r *manifests.Refusal) error {
	x := st.VMIM
	ex.measures = append(ex.measures, results.Measure{Name: "refused: " + r.Reason, Note: r.Message})
	if r.Reason != manifests.ReasonAdmission {
		if err := ex.env.Apply(ctx, x.Manifest); err != nil {
			return fmt.Errorf("create %s: %w", x.Manifest.Key(), err)
		}
		if err := ex.migrationStatus(ctx, x.Manifest, "Failed", r.Error(), ""); err != nil {
			return err
		}
	}
	if st.Refused == nil {
		return migrationMismatch(fmt.Sprintf("%s refused: %s", x.Manifest.Key(), r.Error()))
	}
	if !st.Refused.Matches(r) {
		return migrationMismatch(fmt.Sprintf("%s refused with %q, expected a refusal containing %q", x.Manifest.Key(), r.Error(), st.Refused.Reason))
	}
	return nil
}

// migrationStatus writes the migration's status.phase (and the failure
// reason or target node) to the API server.
func (ex *execution) migrationStatus(ctx context.Context, m *scenarios.Manifest, phase, reason, target string) error {
	status := map[string]any{"phase": phase}
	state := map[string]any{}
	if target != "" {
		state["targetNode"] = target
	}
	if reason != "" {
		state["failed"], state["failureReason"] = true, reason
	}
	status["migrationState"] = state
	next, err := m.Patched(map[string]any{"status": status})
	if err != nil {
		return fmt.Errorf("status of %s: %w", m.Key(), err)
	}
	if err := ex.env.Apply(ctx, next); err != nil {
		return fmt.Errorf("status of %s: %w", m.Key(), err)
	}
	return nil
}

func migrationMismatch(msg string) error {
	var m verdict.Mismatches
	m.Add(verdict.MigrationOutcome, msg)
	return m.Failure("")
}
