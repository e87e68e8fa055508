package harness

import (
	"context"
	"strings"
	"testing"

	"github.com/nqos/nqos/harness/results"
	"github.com/nqos/nqos/scenarios/manifests"
)

// ClusterNodes are the topology's nodes with their labels, as the
// testbed registers its Node objects.
func (s *simEnv) ClusterNodes(context.Context) ([]manifests.Node, error) {
	return s.sc.Topology.NodeList, s.call("nodes")
}

// LauncherPods names a launcher pod for each booted, running VM.
func (s *simEnv) LauncherPods(_ context.Context, namespace, name string) ([]string, error) {
	vm := s.sc.VM(name)
	if vm == nil || vm.Namespace != namespace || s.world.Absent(name) {
		return nil, s.call("pods " + name)
	}
	return []string{"virt-launcher-" + name + "-sim00"}, s.call("pods " + name)
}

// TestStartFailsTwoSided: a VM expected not to start that starts, and a
// reason that differs, each fail the check.
func TestStartFailsTwoSided(t *testing.T) {
	sc := builtin(t, "placement-node-labels")
	vms := sc.Steps[2].Expect.VMs
	vms[0].StartFails.Reason = "0/3 nodes are available: 3 node(s) had untolerated taint."
	vms[1].VM = "web-1"
	res, _ := runOne(t, sc, &simProv{}, ModeV4)
	st := res.Steps[2]
	for _, want := range []string{
		`VM vms/web-gen2 does not start: "0/3 nodes are available: 1 node(s) didn't map localnet \"physnet\"`,
		`want "0/3 nodes are available: 3 node(s) had untolerated taint."`,
		"VM vms/web-1 started (launcher pod virt-launcher-web-1-sim00), want it not to start",
		"VM vms/web-1 schedules on the cluster's Nodes (on node1: ",
	} {
		if st.Status != results.Fail || !strings.Contains(st.Error, want) {
			t.Errorf("step %s: %s\nwant it to contain %s", st.Status, st.Error, want)
		}
	}
}
