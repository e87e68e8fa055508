package cluster

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/nqos/nqos/tools/kind/internal/kindnode"
)

// Topology is how a cluster lays out OVN's control plane.
type Topology string

// The topologies: interconnect gives every node its own zone (NB, SB and
// ovn-northd in the node, its ovn-controller on that SB, an ovnkube zone
// controller per node and one cluster manager), as OVN-Kubernetes runs
// today; central keeps one OVN central in the control plane and one
// ovnkube --init-master for every node.
const (
	Interconnect Topology = "interconnect"
	Central      Topology = "central"
)

// Valid reports whether t is one of the topologies.
func (t Topology) Valid() bool { return t == Interconnect || t == Central }

// TopologyKey in the ConfigMap kube-system/nqos-kind records the
// topology: nqos-kind deploy and the harness read it (absent: central).
const TopologyKey = "topology"

// Zone annotation and name: ovnkube-node sets the annotation on its node
// and ovnkube's database start-up names the NB; neither runs here, so
// splitZones does both.
const zoneAnnotation = "k8s.ovn.org/zone-name"

// splitZones turns the one central of a cluster whose datapath check has
// passed into one zone per node: OVN central (central.sh) starts on every
// worker with its own IP, each node's NB is named after its zone and its
// ovn-controller moves to its own SB (zone.sh), the control plane's SB
// forgets the workers' chassis, and every node carries its zone
// annotation. It waits until every zone's SB lists its node as chassis.
func splitZones(ctx context.Context, ns []ovnNode, central *ovnNode, out io.Writer) error {
	t0 := time.Now()
	for _, n := range ns {
		if n.central {
			continue
		}
		if _, err := script(ctx, n.kn, "central.sh", n.internal); err != nil {
			return fmt.Errorf("OVN zone on node %s: %w", n.name, err)
		}
	}
	for _, n := range ns {
		if _, err := script(ctx, n.kn, "zone.sh", n.name); err != nil {
			return fmt.Errorf("zone %s: %w", n.name, err)
		}
		if _, err := kubectl(ctx, central.kn, "annotate", "node", n.name, "--overwrite", zoneAnnotation+"="+n.name); err != nil {
			return fmt.Errorf("zone %s: %w", n.name, err)
		}
		if n.central {
			continue
		}
		if _, err := kindnode.Run(ctx, central.kn, nil, "ovn-sbctl", "--timeout=10", "--if-exists", "chassis-del", n.name); err != nil {
			return fmt.Errorf("chassis %s in the SB of zone %s: %w", n.name, central.name, err)
		}
	}
	for _, n := range ns {
		if err := waitChassis(ctx, &n, []ovnNode{n}); err != nil {
			return fmt.Errorf("zone %s: %w", n.name, err)
		}
	}
	fmt.Fprintf(out, "cluster: %d zones (one NB, SB and ovn-northd per node) in %.1fs\n", len(ns), time.Since(t0).Seconds())
	return nil
}

// readTopology reads the topology the ConfigMap records; no ConfigMap or
// no key is central (a cluster made before the key existed).
func readTopology(ctx context.Context, central *ovnNode) (Topology, error) {
	got, err := kubectl(ctx, central.kn, "-n", ModeNamespace, "get", "configmap", ModeConfigMap,
		"--ignore-not-found", "-o", "jsonpath={.data."+TopologyKey+"}")
	if err != nil {
		return "", fmt.Errorf("ConfigMap %s/%s: %w", ModeNamespace, ModeConfigMap, err)
	}
	t := Topology(strings.TrimSpace(got))
	if t == "" {
		return Central, nil
	}
	if !t.Valid() {
		return "", fmt.Errorf("ConfigMap %s/%s: %s %q: want %s or %s", ModeNamespace, ModeConfigMap, TopologyKey, t, Interconnect, Central)
	}
	return t, nil
}
