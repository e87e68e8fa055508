package harness

import (
	"context"
	"fmt"

	"github.com/nqos/nqos/harness/verdict"
	"github.com/nqos/nqos/scenarios"
	"github.com/nqos/nqos/scenarios/manifests"
)

// Scheduling is what a startFails check reads from the cluster: its
// Nodes with their labels, and the launcher pods of a VM.
type Scheduling interface {
	// ClusterNodes are the testbed's Node objects as the API server
	// serves them, in node order; a failed read is an error.
	ClusterNodes(ctx context.Context) ([]manifests.Node, error)
	// LauncherPods names the launcher pods of a VM.
	LauncherPods(ctx context.Context, namespace, vm string) ([]string, error)
}

// startFails judges the VM checks of a step: a VM expected not to start
// must have no launcher pod, and placing it on the cluster's Nodes as the
// API server serves them must fail for the expected reason.
func (ex *execution) startFails(ctx context.Context, c *scenarios.Check) (verdict.Mismatches, error) {
	var mism verdict.Mismatches
	if len(c.VMs) == 0 {
		return nil, nil
	}
	sch, ok := ex.env.(Scheduling)
	if !ok {
		return nil, fmt.Errorf("startFails: the environment cannot read the cluster's Nodes and pods")
	}
	nodes, err := sch.ClusterNodes(ctx)
	if err != nil {
		return nil, fmt.Errorf("startFails: read the Nodes: %w", err)
	}
	placed, err := ex.sc.Placement(nodes)
	if err != nil {
		return nil, fmt.Errorf("startFails: place the VirtualMachines on the cluster's Nodes: %w", err)
	}
	for _, vc := range c.VMs {
		m, err := startFailsMismatches(ctx, sch, placed, vc)
		if err != nil {
			return nil, err
		}
		mism.Add(verdict.StartFails, m...)
	}
	return mism, nil
}

func startFailsMismatches(ctx context.Context, sch Scheduling, placed []manifests.Resolved, vc scenarios.VMCheck) ([]string, error) {
	want := vc.StartFails.Reason
	for _, r := range placed {
		if r.VM.Name != vc.VM {
			continue
		}
		pods, err := sch.LauncherPods(ctx, r.VM.Namespace, r.VM.Name)
		if err != nil {
			return nil, fmt.Errorf("startFails: launcher pods of VM %s/%s: %w", r.VM.Namespace, r.VM.Name, err)
		}
		var out []string
		if len(pods) > 0 {
			out = append(out, fmt.Sprintf("VM %s/%s started (launcher pod %s), want it not to start: %s", r.VM.Namespace, r.VM.Name, pods[0], want))
		}
		switch {
		case r.Why == "":
			out = append(out, fmt.Sprintf("VM %s/%s schedules on the cluster's Nodes (on %s: %s), want %q", r.VM.Namespace, r.VM.Name, r.Node, r.Decided, want))
		case r.Why != want:
			out = append(out, fmt.Sprintf("VM %s/%s does not start: %q, want %q", r.VM.Namespace, r.VM.Name, r.Why, want))
		}
		return out, nil
	}
	return []string{fmt.Sprintf("no VirtualMachine %s in the scenario's manifests", vc.VM)}, nil
}
