package scenarios

import (
	"os"
	"strings"
	"testing"

	"github.com/nqos/nqos/scenarios/manifests"
)

func vmimScenario(t *testing.T) string {
	t.Helper()
	data, err := os.ReadFile("24-vmim-migration.yaml")
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// TestVMIMPlan: the shipped scenario's migrations resolve to the
// scheduler's target and KubeVirt's refusals.
func TestVMIMPlan(t *testing.T) {
	sc, err := Parse([]byte(vmimScenario(t)), "24-vmim-migration.yaml")
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"migrate-prod-1": "", "migrate-pinned-1": manifests.ReasonUnschedulable,
		"migrate-db-1": manifests.ReasonUnschedulable, "migrate-halted-1": manifests.ReasonAdmission}
	seen := 0
	for _, st := range sc.Steps {
		x := st.VMIM
		if x == nil {
			continue
		}
		seen++
		reason := ""
		if x.Refusal != nil {
			reason = x.Refusal.Reason
		}
		if reason != want[x.Manifest.ID] {
			t.Errorf("%s: refusal %q, want %q", x.Manifest.ID, reason, want[x.Manifest.ID])
		}
		if x.Manifest.ID == "migrate-prod-1" && (x.To != 1 || x.VM != "prod-1" || x.Mode != DefaultMigrationMode) {
			t.Errorf("prod-1's migration: %+v", x)
		}
	}
	if seen != len(want) {
		t.Errorf("%d migrations resolved, want %d", seen, len(want))
	}
}

// TestVMIMErrors: each misuse names the file, the line, the field and
// the object.
func TestVMIMErrors(t *testing.T) {
	for _, c := range []struct{ name, old, new, want string }{
		{"refusal not expected", "    apply: [migrate-pinned-1]\n    refused: {reason: \"didn't match Pod's node affinity/selector\"}",
			"    apply: [migrate-pinned-1]",
			"steps[6].apply[0]: manifests.migrate-pinned-1 (VirtualMachineInstanceMigration vms/migrate-pinned-1) would be refused: migrationTargetPodUnschedulable: Migration target pod for VMI [vms/pinned-1] is currently unschedulable"},
		{"refusal expected but migrated", "    probe: {peer: ext-1, object: tier-production, dscp: 46, maxUnmarked: 2, maxLost: 250}\n  - wait",
			"    refused: {reason: unschedulable}\n  - wait",
			"steps[2].refused: manifests.migrate-prod-1 (VirtualMachineInstanceMigration vms/migrate-prod-1) is not refused: KubeVirt migrates VMI vms/prod-1 to node 1"},
		{"another reason", `refused: {reason: "does not exist"}`, `refused: {reason: "unschedulable"}`,
			`steps[8].refused.reason: manifests.migrate-halted-1 (VirtualMachineInstanceMigration vms/migrate-halted-1) is refused (AdmissionDenied: admission webhook`},
		{"no probe", "    probe: {peer: ext-1, object: tier-production, dscp: 46, maxUnmarked: 2, maxLost: 250}\n  - wait", "  - wait",
			"steps[2]: manifests.migrate-prod-1 (VirtualMachineInstanceMigration vms/migrate-prod-1) migrates VMI vms/prod-1: the step needs a probe"},
		{"probe on a refusal", "    refused: {reason: \"does not exist\"}", "    refused: {reason: \"does not exist\"}\n    probe: {peer: ext-1, object: tier-production, dscp: 46}",
			"steps[8].probe: manifests.migrate-halted-1 (VirtualMachineInstanceMigration vms/migrate-halted-1) is refused: no migration runs under the probe"},
		{"probe on a plain apply", "  - start: [after-migration]", "  - apply: [tier-production]\n    probe: {peer: ext-1, object: tier-production, dscp: 46}\n  - start: [after-migration]",
			"steps[4].probe: an apply step runs under a probe only when it creates a VirtualMachineInstanceMigration KubeVirt runs"},
		{"not alone", "    apply: [migrate-db-1]", "    apply: [migrate-db-1, migrate-halted-1]",
			`steps[7].apply[0]: manifest "migrate-db-1" is a VirtualMachineInstanceMigration: apply it in a step of its own`},
		{"applied twice", "    apply: [migrate-db-1]", "    apply: [migrate-pinned-1]",
			`manifest "migrate-pinned-1": VirtualMachineInstanceMigration vms/migrate-pinned-1 is already created at this step`},
		{"refused on another kind", "  - start: [after-migration]", "  - start: [after-migration]\n    refused: {reason: x}",
			"steps[4].refused: only an apply step of a VirtualMachineInstanceMigration can be refused"},
		{"edited", "  - start: [after-migration]", "  - edit: {manifest: migrate-prod-1, patch: {spec: {vmiName: db-1}}}\n  - start: [after-migration]",
			`steps[4].edit.manifest: manifest "migrate-prod-1" is a VirtualMachineInstanceMigration: its spec is immutable`},
		{"vmiName missing", "    spec: {vmiName: db-1}", "    spec: {}",
			"manifests.migrate-db-1.spec.vmiName: VirtualMachineInstanceMigration vms/migrate-db-1: vmiName is missing"},
		{"unknown VMI", "    spec: {vmiName: db-1}", "    spec: {vmiName: db-9}",
			`steps[7].refused.reason: manifests.migrate-db-1 (VirtualMachineInstanceMigration vms/migrate-db-1) is refused (AdmissionDenied: admission webhook "migration-create-validator.kubevirt.io" denied the request: the VMI "vms/db-9" does not exist)`},
		{"bad mode", "topology:\n", "migrationMode: teleport\ntopology:\n", `migrationMode: invalid mode "teleport"`},
	} {
		text := vmimScenario(t)
		if !strings.Contains(text, c.old) {
			t.Fatalf("%s: the scenario has no %q", c.name, c.old)
		}
		_, err := Parse([]byte(strings.Replace(text, c.old, c.new, 1)), "24-vmim-migration.yaml")
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.HasPrefix(err.Error(), "24-vmim-migration.yaml:") {
			t.Errorf("%s: got %v\nwant %q", c.name, err, c.want)
		}
	}
}

// TestVMIMDecideFollowsTheWalk: a migration back to node 0 after the
// first one is the scheduler's other node.
func TestVMIMDecideFollowsTheWalk(t *testing.T) {
	text := strings.Replace(vmimScenario(t), "  - start: [after-migration]",
		"  - apply: [migrate-back]\n    probe: {peer: ext-1, object: tier-production, dscp: 46}\n  - start: [after-migration]", 1)
	text = strings.Replace(text, "flows:\n", "  migrate-back:\n    apiVersion: kubevirt.io/v1\n    kind: VirtualMachineInstanceMigration\n    metadata: {name: migrate-back, namespace: vms}\n    spec: {vmiName: prod-1}\nflows:\n", 1)
	sc, err := Parse([]byte(text), "24-vmim-migration.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if x := sc.Steps[4].VMIM; x == nil || x.To != 0 || x.Refusal != nil {
		t.Errorf("migrate-back: %+v", x)
	}
}
