package scenarios

import (
	"fmt"

	"github.com/nqos/nqos/scenarios/manifests"
)

// VMCheck asserts on the VM of a VirtualMachine manifest.
type VMCheck struct {
	VM string `yaml:"vm,required"`
	// StartFails: the VM cannot start, for Reason (the scheduler's
	// message, e.g. "0/3 nodes are available: 3 node(s) didn't match
	// Pod's node affinity/selector."). A VM that starts fails the check,
	// and so does another reason.
	StartFails *StartFails `yaml:"startFails,required"`
}

// StartFails is the expected reason a VM does not start.
type StartFails struct {
	Reason string `yaml:"reason,required"`
}

// UnstartedVM is a VirtualMachine manifest's VM that no node can run,
// and which a startFails check expects not to start: it is not booted.
type UnstartedVM struct {
	Name, Namespace string
	// Manifest is its VirtualMachine manifest's id.
	Manifest string
	// Reason is why it does not start on the nodes of the topology.
	Reason string
}

// Unstarted returns the unstarted VM of that name, or nil.
func (sc *Scenario) Unstarted(name string) *UnstartedVM {
	return named(sc.UnstartedVMs, name, func(vm *UnstartedVM) string { return vm.Name })
}

func (vc *VMCheck) validate(v *validator, path string) error {
	if vc.StartFails.Reason == "" {
		return v.d.errAt(path+".startFails.reason", "empty reason")
	}
	if v.sc.Unstarted(vc.VM) != nil {
		return nil
	}
	if vm := v.sc.VM(vc.VM); vm == nil || vm.Manifest == "" {
		return v.d.errAt(path+".vm", "%q is not the VM of a VirtualMachine manifest", vc.VM)
	}
	return nil
}

// expectsStartFails are the VMs a startFails check of some step names.
func (sc *Scenario) expectsStartFails() map[string]bool {
	out := map[string]bool{}
	for _, s := range sc.Steps {
		for _, c := range []*Check{(*Check)(s.Wait), (*Check)(s.Expect)} {
			if c == nil {
				continue
			}
			for _, vc := range c.VMs {
				out[vc.VM] = true
			}
		}
	}
	return out
}

// Placement places the VirtualMachine manifests' VMs on nodes (the
// cluster's Nodes as read at run time), with the manifests as written.
func (sc *Scenario) Placement(nodes []manifests.Node) ([]manifests.Resolved, error) {
	var objs []*manifests.Object
	for _, m := range sc.Manifests {
		if !m.Ignored && m.Revision == 0 {
			objs = append(objs, &manifests.Object{File: sc.File, Line: m.Line, APIVersion: m.APIVersion, Kind: m.Kind,
				Namespace: m.Namespace, Name: m.Name, Raw: m.Object})
		}
	}
	set, err := manifests.Decode(objs)
	if err != nil {
		return nil, fmt.Errorf("scenario %s: %w", sc.Name, err)
	}
	return set.PlaceOn(nodes)
}
