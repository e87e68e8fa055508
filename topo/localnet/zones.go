package localnet

import (
	"fmt"
	"path/filepath"
	"slices"
)

// Topology is how the testbed lays out OVN's control plane.
type Topology string

// Topologies.
const (
	// Central: one NB and SB ovsdb-server and one ovn-northd serve every
	// node (OVN-Kubernetes before interconnect; older clusters).
	Central Topology = "central"
	// Interconnect: every node is its own zone with its own NB, SB and
	// ovn-northd, and its ovn-controller on its zone's SB (OVN-Kubernetes
	// today). Each zone holds the localnet switch of every network with
	// the zone's ports only; traffic between zones crosses the fabric.
	Interconnect Topology = "interconnect"
)

// ParseTopology accepts "central" and "interconnect".
func ParseTopology(s string) (Topology, error) {
	switch t := Topology(s); t {
	case Central, Interconnect:
		return t, nil
	}
	return "", fmt.Errorf("topology %q: must be %s or %s", s, Central, Interconnect)
}

// GlobalZone is the name of the one zone of the central topology (the
// controller's condition is then Ready-In-Zone-global).
const GlobalZone = "global"

// Zone is one OVN control plane: an NB and SB ovsdb-server and an
// ovn-northd, and the nodes whose ovn-controller uses its SB.
type Zone struct {
	// Name is GlobalZone (central) or the zone's node (interconnect).
	Name  string   `json:"name"`
	Nodes []string `json:"nodes"`
	// NB and SB are the database addresses (unix sockets on the
	// embedded testbed).
	NB string `json:"nb"`
	SB string `json:"sb"`
	// Dir holds the zone's databases, sockets and pidfiles ("" on a
	// KinD cluster, whose central is the cluster's).
	Dir string `json:"dir,omitempty"`
	// Owner is the node key of the zone's daemons in the run's state:
	// "" for the central daemons, the node for a node's zone.
	Owner string `json:"owner"`
}

// Has reports whether node belongs to the zone.
func (z Zone) Has(node string) bool { return slices.Contains(z.Nodes, node) }

// zoneLayout maps a testbed's nodes onto zones; central and interconnect
// are its implementations, so no caller branches on the topology.
type zoneLayout interface {
	// zones are the zones of nodes, in node order, with their run
	// directories under dir.
	zones(dir string, nodes []string) []Zone
}

// centralLayout is one zone for every node.
type centralLayout struct{}

func (centralLayout) zones(dir string, nodes []string) []Zone {
	return []Zone{newZone(GlobalZone, "", dir, slices.Clone(nodes))}
}

// interconnectLayout is one zone per node.
type interconnectLayout struct{}

func (interconnectLayout) zones(dir string, nodes []string) []Zone {
	out := make([]Zone, 0, len(nodes))
	for _, n := range nodes {
		out = append(out, newZone(n, n, filepath.Join(dir, "zone-"+n), []string{n}))
	}
	return out
}

func newZone(name, owner, dir string, nodes []string) Zone {
	return Zone{Name: name, Nodes: nodes, Dir: dir, Owner: owner,
		NB: "unix:" + filepath.Join(dir, "nb.sock"), SB: "unix:" + filepath.Join(dir, "sb.sock")}
}

// layout is the zone layout of a topology ("" is central).
func (t Topology) layout() zoneLayout {
	if t == Interconnect {
		return interconnectLayout{}
	}
	return centralLayout{}
}

// nbSock and sbSock are a zone's socket paths.
func (z Zone) nbSock() string { return filepath.Join(z.Dir, "nb.sock") }
func (z Zone) sbSock() string { return filepath.Join(z.Dir, "sb.sock") }

// Zones are the testbed's zones in node order (one on a KinD cluster:
// its central).
func (t *Testbed) Zones() []Zone { return t.cluster().zones() }

// Topology is the control-plane topology in use.
func (t *Testbed) Topology() Topology { return t.st.Spec.Topology }

// ZoneOf is the zone of a node; on the central topology "" names the one
// zone too.
func (t *Testbed) ZoneOf(node string) (Zone, error) {
	zs := t.Zones()
	if len(zs) == 1 && (node == "" || zs[0].Has(node)) {
		return zs[0], nil
	}
	for _, z := range zs {
		if z.Has(node) {
			return z, nil
		}
	}
	if node == "" {
		return Zone{}, fmt.Errorf("testbed %s: %s topology has %d zones: name the node", t.st.RunID, t.st.Spec.Topology, len(zs))
	}
	return Zone{}, fmt.Errorf("testbed %s: no zone holds node %q", t.st.RunID, node)
}
