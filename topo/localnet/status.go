package localnet

import (
	"context"
	"fmt"
	"io"
	"sort"
)

// DaemonStatus is one daemon of a run.
type DaemonStatus struct {
	Node, Name string
	Pid        int
	Running    bool
}

// Status is what `nqos-sim status` prints.
type Status struct {
	RunID      string
	Dir        string
	NB, SB     string // the first zone's
	Topology   Topology
	Zones      []Zone
	Kubeconfig string
	Nodes      []Node
	Hosts      []Host
	Guests     []string
	Daemons    []DaemonStatus
	Netns      []string
}

// RunStatus reads a run's state and checks its daemons and namespaces.
func RunStatus(ctx context.Context, runID string) (Status, error) {
	if err := ValidateRunID(runID); err != nil {
		return Status{}, err
	}
	st, err := loadState(runID)
	if err != nil {
		return Status{}, err
	}
	nss, err := runNetns(runID)
	if err != nil {
		return Status{}, err
	}
	dir := RunDir(runID)
	s := Status{RunID: runID, Dir: dir, NB: "unix:" + dir + "/nb.sock", SB: "unix:" + dir + "/sb.sock",
		Topology: st.Spec.Topology, Zones: st.Zones, Kubeconfig: st.Kubeconfig, Nodes: st.Nodes, Hosts: st.Hosts, Guests: st.Guests, Netns: nss}
	if len(st.Zones) > 0 { // the first zone's, as Testbed.NBAddress
		s.NB, s.SB = st.Zones[0].NB, st.Zones[0].SB
	}
	for _, d := range st.Daemons {
		pid, _ := readPid(d.Pidfile)
		s.Daemons = append(s.Daemons, DaemonStatus{Node: d.Node, Name: d.Name, Pid: pid, Running: pid > 0 && alive(pid)})
	}
	sort.Strings(s.Guests)
	return s, nil
}

// Healthy reports whether every daemon runs.
func (s Status) Healthy() bool {
	for _, d := range s.Daemons {
		if !d.Running {
			return false
		}
	}
	return true
}

// Print writes the status as text.
func (s Status) Print(w io.Writer) {
	fmt.Fprintf(w, "run %s  dir %s  topology %s\n", s.RunID, s.Dir, s.Topology)
	for _, z := range s.Zones {
		fmt.Fprintf(w, "zone %-6s nodes %v\n  NB %s\n  SB %s\n", z.Name, z.Nodes, z.NB, z.SB)
	}
	if s.Kubeconfig != "" {
		fmt.Fprintf(w, "kubeconfig %s\n", s.Kubeconfig)
	}
	for _, n := range s.Nodes {
		fmt.Fprintf(w, "node %-6s netns %s  encap %s  uplink capture: %s in %s\n", n.Name, n.Netns, n.EncapIP, n.FabricIf, fabricNetns(s.RunID))
	}
	for _, h := range s.Hosts {
		fmt.Fprintf(w, "host %-8s netns %s  vlan %d  %v\n", h.Name, h.Netns, h.VLAN, h.Addrs)
	}
	for _, g := range s.Guests {
		fmt.Fprintf(w, "guest %s netns %s\n", g, guestNetns(s.RunID, g))
	}
	for _, d := range s.Daemons {
		state := "running"
		if !d.Running {
			state = "DOWN"
		}
		node := d.Node
		if node == "" {
			node = "central"
		}
		fmt.Fprintf(w, "daemon %-14s %-22s pid %-7d %s\n", node, d.Name, d.Pid, state)
	}
}
