package scenarios

import (
	"fmt"
	"strings"

	"github.com/nqos/nqos/scenarios/manifests"
)

// DefaultMigrationMode is the testbed's migration mode when the scenario
// names none: the target pod gets its own port, as ovnkube migrates a
// localnet VM on interconnect.
const DefaultMigrationMode = MigratePerPodLSP

// Refused expects the VirtualMachineInstanceMigration an apply step
// creates to be refused; Reason is a substring of KubeVirt's message or
// its reason (AdmissionDenied, migrationTargetPodUnschedulable).
type Refused struct {
	Reason string `yaml:"reason,required"`
}

// VMIMigration is a VirtualMachineInstanceMigration an apply step
// creates, resolved against the topology: the VM its VMI is, how the
// scheduler places that VM, and the outcome the step walk predicts.
type VMIMigration struct {
	Manifest  *Manifest
	Migration *manifests.Migration
	// VM is the topology VM the VMI belongs to ("" when none).
	VM        string
	Placement manifests.Placement
	// Nodes are the testbed's nodes with their labels, by index.
	Nodes []manifests.Node
	Mode  string
	// To is the predicted target node index; Refusal the predicted
	// refusal (To is then -1).
	To      int
	Refusal *manifests.Refusal
}

// Decide is KubeVirt's verdict on the migration when the VM runs
// (running) on node index node and the VMs are spread as load (VMs per
// node index): the target node index, or the refusal.
func (x *VMIMigration) Decide(running bool, node int, load map[int]int) (int, *manifests.Refusal) {
	state := manifests.VMIState{Running: running && x.VM != ""}
	if state.Running {
		state.Node = x.Nodes[node].Name
	}
	byName := map[string]int{}
	for i, n := range load {
		if i >= 0 && i < len(x.Nodes) {
			byName[x.Nodes[i].Name] = n
		}
	}
	target, r := manifests.Decide(x.Migration, x.Placement, state, x.Nodes, byName)
	if r != nil {
		return -1, r
	}
	for i, n := range x.Nodes {
		if n.Name == target {
			return i, nil
		}
	}
	return -1, &manifests.Refusal{Reason: manifests.ReasonUnschedulable, Message: "target node " + target + " is not a testbed node"}
}

// Matches reports whether the refusal is the expected one.
func (r *Refused) Matches(got *manifests.Refusal) bool {
	return got != nil && (got.Reason == r.Reason || strings.Contains(got.Message, r.Reason))
}

// applyMigration resolves the VirtualMachineInstanceMigration an apply
// step creates, predicts KubeVirt's verdict and checks it against the
// step's refused expectation and probe.
func (v *validator) applyMigration(s *Step, m *Manifest, ids []string, path string, st *stepState) error {
	stepPath := strings.TrimSuffix(path, ".apply[0]")
	if len(ids) != 1 {
		return v.d.errAt(path, "manifest %q is a %s: apply it in a step of its own (the step runs the migration)", m.ID, m.Kind)
	}
	if st.applied[m.ID] {
		return v.d.errAt(path, "manifest %q: %s is already created at this step (a new migration is a new object: another manifest)", m.ID, m.Key())
	}
	x, err := v.resolveMigration(m)
	if err != nil {
		return err
	}
	running := x.VM != "" && st.running[x.VM]
	load := map[int]int{}
	for name, n := range st.node {
		if st.running[name] {
			load[n]++
		}
	}
	x.To, x.Refusal = x.Decide(running, st.node[x.VM], load)
	s.VMIM = x
	return v.migrationOutcome(s, x, stepPath, st)
}

// migrationOutcome checks the predicted outcome against the step's
// expectation and records its effect on the walk.
func (v *validator) migrationOutcome(s *Step, x *VMIMigration, path string, st *stepState) error {
	obj := fmt.Sprintf("manifests.%s (%s)", x.Manifest.ID, x.Manifest.Key())
	switch {
	case x.Refusal != nil && s.Refused == nil:
		return v.d.errAt(path+".apply[0]", "%s would be refused: %s (expect it with refused: {reason: ...})", obj, x.Refusal.Error())
	case x.Refusal == nil && s.Refused != nil:
		return v.d.errAt(path+".refused", "%s is not refused: KubeVirt migrates VMI %s to node %d", obj, x.Migration.VMIKey(), x.To)
	case s.Refused != nil && !s.Refused.Matches(x.Refusal):
		return v.d.errAt(path+".refused.reason", "%s is refused (%s), and the refusal does not contain %q", obj, x.Refusal.Error(), s.Refused.Reason)
	case x.Refusal != nil && s.Probe != nil:
		return v.d.errAt(path+".probe", "%s is refused: no migration runs under the probe", obj)
	case x.Refusal == nil && s.Probe == nil:
		return v.d.errAt(path, "%s migrates VMI %s: the step needs a probe (peer, object, dscp)", obj, x.Migration.VMIKey())
	}
	if x.Refusal == nil {
		st.node[x.VM] = x.To
	}
	// Only the admission webhook keeps the object out of the cluster.
	st.applied[x.Manifest.ID] = x.Refusal == nil || x.Refusal.Reason != manifests.ReasonAdmission
	return nil
}

// resolveMigration decodes the migration and finds its VMI's VM and
// placement.
func (v *validator) resolveMigration(m *Manifest) (*VMIMigration, error) {
	path := "manifests." + m.ID
	mig, err := manifests.DecodeMigration(v.object(m))
	if err != nil {
		return nil, v.manifestErr(path, err)
	}
	set, err := v.manifestSet()
	if err != nil {
		return nil, err
	}
	nets, err := set.Networks()
	if err != nil {
		return nil, v.d.errAt("manifests", "%v", err)
	}
	x := &VMIMigration{Manifest: m, Migration: mig, Mode: v.sc.MigrationMode, To: -1}
	if x.Mode == "" {
		x.Mode = DefaultMigrationMode
	}
	x.Nodes = v.sc.Topology.NodeList
	if x.Placement.Mappings, err = manifests.MappingsOn(set.NNCPs, x.Nodes); err != nil {
		return nil, v.manifestErr("manifests", err)
	}
	vm := v.vmNamed(mig.Namespace, mig.VMI)
	if vm == nil {
		return x, nil
	}
	x.VM = vm.Name
	for _, sv := range set.VMs {
		if sv.Namespace == vm.Namespace && sv.Name == vm.Name {
			x.Placement.NodeSelector = sv.NodeSelector
		}
	}
	for _, name := range vm.Networks() {
		for _, n := range nets {
			if n.Name == name {
				x.Placement.Networks = append(x.Placement.Networks, n)
				break
			}
		}
	}
	return x, nil
}

// vmNamed is the topology VM of that namespace and name, or nil.
func (v *validator) vmNamed(namespace, name string) *VM {
	for i := range v.sc.Topology.VMs {
		if vm := &v.sc.Topology.VMs[i]; vm.Namespace == namespace && vm.Name == name {
			return vm
		}
	}
	return nil
}

// migrationMode checks the scenario's migrationMode.
func (v *validator) migrationMode() error {
	switch v.sc.MigrationMode {
	case "", MigratePerPodLSP, MigrateMultiChassis:
		return nil
	}
	return v.d.errAt("migrationMode", "invalid mode %q (want %s or %s)", v.sc.MigrationMode, MigratePerPodLSP, MigrateMultiChassis)
}

// refusedOnlyOnMigrations checks that refused sits on an apply step of
// a VirtualMachineInstanceMigration.
func (v *validator) refusedOnlyOnMigrations(s *Step, path string) error {
	if s.Refused != nil && s.VMIM == nil {
		return v.d.errAt(path+".refused", "only an apply step of a %s can be refused", manifests.MigrationKind)
	}
	return nil
}

// probeRule: an apply step runs under a probe when it creates a
// migration KubeVirt runs (applyMigration requires it then).
func (Apply) probeRule() probeRule { return probeRule{} }

// describeMigration is the plan line of an apply step of a migration.
func describeMigration(x *VMIMigration) string {
	if x.Refusal != nil {
		return fmt.Sprintf("%s of VMI %s, refused: %s", x.Manifest.Key(), x.Migration.VMIKey(), x.Refusal.Reason)
	}
	return fmt.Sprintf("%s: VMI %s to node %d (%s, %s)", x.Manifest.Key(), x.Migration.VMIKey(), x.To, x.Nodes[x.To].Name, x.Mode)
}
