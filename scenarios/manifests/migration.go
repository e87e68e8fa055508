package manifests

import (
	"fmt"
	"maps"

	"github.com/nqos/nqos/internal/qos"
)

// KubeVirt's VirtualMachineInstanceMigration.
const (
	MigrationAPIVersion = "kubevirt.io/v1"
	MigrationKind       = "VirtualMachineInstanceMigration"
)

// Reasons of a refused migration, as KubeVirt reports them: the
// migration admission webhook denies the object, or the object is
// created and its target pod is unschedulable (an event of that reason
// on the migration, which then fails).
const (
	ReasonAdmission     = "AdmissionDenied"
	ReasonUnschedulable = "migrationTargetPodUnschedulable"
	// MigrationWebhook is the name of KubeVirt's migration admission webhook.
	MigrationWebhook = "migration-create-validator.kubevirt.io"
)

// Migration is a decoded VirtualMachineInstanceMigration: the VMI it
// migrates and the node selector it adds for the target.
type Migration struct {
	Object          *Object
	Name, Namespace string
	// VMI is spec.vmiName (in the migration's namespace).
	VMI string
	// AddedNodeSelector is spec.addedNodeSelector: labels the target
	// node must carry besides the VM's own placement.
	AddedNodeSelector map[string]string
}

type migrationDoc struct {
	Spec struct {
		VMIName           string            `json:"vmiName"`
		AddedNodeSelector map[string]string `json:"addedNodeSelector"`
	} `json:"spec"`
}

// DecodeMigration decodes and validates a VirtualMachineInstanceMigration
// as KubeVirt's API validates it.
func DecodeMigration(o *Object) (*Migration, error) {
	var doc migrationDoc
	if err := o.intoNamespaced(MigrationAPIVersion, "VirtualMachineInstanceMigration", &doc); err != nil {
		return nil, err
	}
	if doc.Spec.VMIName == "" {
		return nil, o.errf("spec.vmiName", "vmiName is missing")
	}
	return &Migration{Object: o, Name: o.Name, Namespace: o.Namespace, VMI: doc.Spec.VMIName,
		AddedNodeSelector: doc.Spec.AddedNodeSelector}, nil
}

// VMIKey is the migrated VMI as "namespace/name".
func (m *Migration) VMIKey() string { return m.Namespace + "/" + m.VMI }

// Refusal is why KubeVirt refuses a migration: Reason is one of the
// Reason constants, Message the text KubeVirt reports.
type Refusal struct {
	Reason, Message string
}

func (r *Refusal) Error() string { return r.Reason + ": " + r.Message }

// Placement is what the scheduler needs to place a VM's target pod: the
// VM's node selector, its NICs' networks and the nodes' bridge mappings.
type Placement struct {
	NodeSelector map[string]string
	Networks     []qos.Network
	Mappings     Mappings
}

// VMIState is the migrated VMI as the cluster has it when the migration
// is created.
type VMIState struct {
	// Running: the VMI exists and runs (a halted or never started VM has
	// no VMI).
	Running bool
	// Node is where it runs.
	Node string
}

// Admit is KubeVirt's migration admission: a migration of a VMI that
// does not exist is denied (nil when admitted).
func Admit(m *Migration, vmi VMIState) *Refusal {
	if vmi.Running {
		return nil
	}
	return &Refusal{Reason: ReasonAdmission, Message: fmt.Sprintf("admission webhook %q denied the request: the VMI %q does not exist", MigrationWebhook, m.VMIKey())}
}

// ReasonAntiAffinity is the scheduler's filter reason for the source
// node: KubeVirt's target pod has an anti-affinity to the source pod.
const ReasonAntiAffinity = "node(s) didn't match pod anti-affinity rules"

// Target is the node the scheduler gives the migration's target pod: a
// node other than the source that satisfies the VM's node selector and
// the migration's added one and maps every localnet the VM's NICs use;
// the one with the fewest VMs (load) in node order. With none, the
// refusal is KubeVirt's unschedulable target pod with the scheduler's
// per-node reasons.
func Target(m *Migration, p Placement, vmi VMIState, nodes []Node, load map[string]int) (string, *Refusal) {
	sel := maps.Clone(p.NodeSelector)
	if sel == nil {
		sel = map[string]string{}
	}
	maps.Copy(sel, m.AddedNodeSelector)
	best := ""
	failed := map[string]int{}
	for _, n := range nodes {
		switch {
		case n.Name == vmi.Node:
			failed[ReasonAntiAffinity]++
		case !selects(sel, n):
			failed[ReasonNodeSelector]++
		case unmapped(p.Networks, n.Name, p.Mappings) != "":
			failed[fmt.Sprintf(reasonLocalnet, unmapped(p.Networks, n.Name, p.Mappings))]++
		case best == "" || load[n.Name] < load[best]:
			best = n.Name
		}
	}
	if best != "" {
		return best, nil
	}
	return "", &Refusal{Reason: ReasonUnschedulable, Message: fmt.Sprintf("Migration target pod for VMI [%s] is currently unschedulable: %s",
		m.VMIKey(), Unschedulable(len(nodes), failed))}
}

// Decide is KubeVirt's verdict on a migration created now: refused at
// admission, refused by the scheduler, or the target node.
func Decide(m *Migration, p Placement, vmi VMIState, nodes []Node, load map[string]int) (string, *Refusal) {
	if r := Admit(m, vmi); r != nil {
		return "", r
	}
	return Target(m, p, vmi, nodes, load)
}
