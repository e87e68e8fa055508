package localnet

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
)

// Daemon names accepted by RestartDaemon. The zone daemons (nb-ovsdb,
// sb-ovsdb, ovn-northd) are those of the node's zone.
const (
	DaemonOVNController = "ovn-controller"
	DaemonVSwitchd      = "ovs-vswitchd"
	DaemonNodeDB        = "ovsdb-server"
	DaemonNB            = "nb-ovsdb"
	DaemonSB            = "sb-ovsdb"
	DaemonNorthd        = "ovn-northd"
)

// daemonState is how to (re)start one detached daemon.
type daemonState struct {
	Node    string   `json:"node"` // "" for central daemons
	Name    string   `json:"name"`
	Netns   string   `json:"netns,omitempty"`
	Env     []string `json:"env,omitempty"`
	Argv    []string `json:"argv"`
	Pidfile string   `json:"pidfile"`
	Log     string   `json:"log"`
}

// Node is a node of the testbed.
type Node struct {
	Name      string `json:"name"` // Kubernetes node and OVN chassis name
	Index     int    `json:"index"`
	Netns     string `json:"netns"`
	Dir       string `json:"dir"`     // OVS_RUNDIR/OVN_RUNDIR of the node
	DB        string `json:"db"`      // "unix:<dir>/db.sock"
	EncapIP   string `json:"encapIP"` // on br-phys
	UplinkIf  string `json:"uplinkIf"`
	FabricIf  string `json:"fabricIf"`
	ProviderB string `json:"providerBridge"`
}

// Host is an external host on the fabric.
type Host struct {
	Name    string   `json:"name"`
	Netns   string   `json:"netns"`
	Ifname  string   `json:"ifname"`
	Network string   `json:"network"`
	VLAN    int      `json:"vlan"`
	Addrs   []string `json:"addrs"` // CIDRs
	IPv4    string   `json:"ipv4,omitempty"`
	IPv6    string   `json:"ipv6,omitempty"`
	// Router is the router the host sits behind ("" = on the VLAN).
	Router string `json:"router,omitempty"`
}

// plugState is a guest NIC plugged into a node.
type plugState struct {
	Guest    string `json:"guest"`
	Node     string `json:"node"`
	NIC      string `json:"nic"`
	Active   bool   `json:"active"`
	NodeIf   string `json:"nodeIf"`
	IfaceID  string `json:"ifaceID"`
	GuestIfc string `json:"guestIf"`
}

// state is the run's state.json: enough for status, restarts and Down.
type state struct {
	RunID   string        `json:"runID"`
	Spec    Spec          `json:"spec"`
	Nodes   []Node        `json:"nodes"`
	Zones   []Zone        `json:"zones"`
	Fabric  Node          `json:"fabric"`
	Hosts   []Host        `json:"hosts"`
	Routers []Router      `json:"routers,omitempty"`
	Daemons []daemonState `json:"daemons"`
	Netns   []string      `json:"netns"`
	// Adopted are the names bound to namespaces of a KinD cluster's
	// node containers and pods (kind.go).
	Adopted []string `json:"adopted,omitempty"`
	// LogFrom is where each KinD node daemon log stood when the run began.
	LogFrom    map[string]int64 `json:"logFrom,omitempty"`
	Guests     []string         `json:"guests"`
	Plugs      []plugState      `json:"plugs"`
	NextIndex  int              `json:"nextIfindex"`
	NextPlug   int              `json:"nextPlug"`
	Kubeconfig string           `json:"kubeconfig,omitempty"`
}

func statePath(runID string) string { return filepath.Join(RunDir(runID), "state.json") }

func (s *state) save() error {
	raw, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return fmt.Errorf("testbed %s: encode state: %w", s.RunID, err)
	}
	tmp := statePath(s.RunID) + ".tmp"
	if err := os.WriteFile(tmp, raw, 0o644); err != nil {
		return fmt.Errorf("testbed %s: write state: %w", s.RunID, err)
	}
	if err := os.Rename(tmp, statePath(s.RunID)); err != nil {
		return fmt.Errorf("testbed %s: write state: %w", s.RunID, err)
	}
	return nil
}

// loadState reads a run's state.json (for status and tools).
func loadState(runID string) (*state, error) {
	raw, err := os.ReadFile(statePath(runID))
	if err != nil {
		return nil, fmt.Errorf("testbed %s: read state: %w", runID, err)
	}
	var s state
	if err := json.Unmarshal(raw, &s); err != nil {
		return nil, fmt.Errorf("testbed %s: decode %s: %w", runID, statePath(runID), err)
	}
	return &s, nil
}

// nextIfindex reserves two consecutive ifindexes for a veth pair.
func (s *state) nextIfindex() int {
	if s.NextIndex == 0 {
		s.NextIndex = ifindexBase(s.RunID)
	}
	i := s.NextIndex
	s.NextIndex += 2
	return i
}

func (s *state) daemon(node, name string) (*daemonState, bool) {
	for i := range s.Daemons {
		if s.Daemons[i].Node == node && s.Daemons[i].Name == name {
			return &s.Daemons[i], true
		}
	}
	return nil, false
}

// byName returns the element of list whose name, by nameOf, is name.
func byName[T any](list []T, name string, nameOf func(T) string) (T, bool) {
	for _, x := range list {
		if nameOf(x) == name {
			return x, true
		}
	}
	var zero T
	return zero, false
}

func (s *state) node(name string) (Node, bool) {
	return byName(s.Nodes, name, func(x Node) string { return x.Name })
}
