package scenarios

import (
	"fmt"
	"net/netip"
	"slices"
	"strings"
)

// LifecycleSteps are the step kinds acting on VMs: start late VMs,
// live-migrate one, recreate launcher pods, change a guest's address and
// restart a daemon under the VM's probe.
type LifecycleSteps struct {
	StartVM         StartVM         `yaml:"startVM"`
	Migrate         *Migrate        `yaml:"migrate"`
	RestartLauncher RestartLauncher `yaml:"restartLauncher"`
	GuestIP         *GuestIP        `yaml:"guestIP"`
	RestartDaemon   *RestartDaemon  `yaml:"restartDaemon"`
}

// StartVM starts late VMs (by name).
type StartVM []string

// RestartLauncher recreates the launcher pods of VMs (by name).
type RestartLauncher []string

// Migration modes of a migrate step (package kubevirt's emulations).
const (
	MigratePerPodLSP    = "per-pod-lsp"   // a new LSP named after the target pod, as ovnkube does
	MigrateMultiChassis = "multi-chassis" // one LSP bound on both chassis during the switch
)

// Migrate live-migrates a VM to another node.
type Migrate struct {
	VM   string `yaml:"vm,required"`
	To   int    `yaml:"to,required"` // node index
	Mode string `yaml:"mode,required"`
	// LateTargetLSP (per-pod-lsp only): the target pod's LSP is created
	// only after the guest moved, so the VM is "migrated in" after its
	// NetworkQoS and the controller must pick up a port it has not seen.
	LateTargetLSP bool `yaml:"lateTargetLSP"`
}

// GuestIP changes the VM's IPv4 address inside the guest (OVN never sees
// it).
type GuestIP struct {
	VM string `yaml:"vm,required"`
	V4 string `yaml:"v4,required"` // CIDR
}

// Daemons a restartDaemon step restarts.
const (
	DaemonOVNController = "ovn-controller"
	DaemonVSwitchd      = "ovs-vswitchd"
	DaemonNB            = "nb" // the central NB ovsdb-server; node is ignored
)

// Restart modes of a restartDaemon step.
const (
	RestartKill     = "kill"     // SIGKILL
	RestartGraceful = "graceful" // SIGTERM, wait for exit
)

// RestartDaemon restarts one daemon while a VM's marked probe stream runs.
type RestartDaemon struct {
	Node   int    `yaml:"node"` // node index (ovn-controller, ovs-vswitchd)
	Daemon string `yaml:"daemon,required"`
	Mode   string `yaml:"mode,required"`
	VM     string `yaml:"vm,required"` // sends the probe stream to the probe's peer
}

func (*Migrate) probeRule() probeRule { return probeRule{required: true} }

func (RestartLauncher) probeRule() probeRule { return probeRule{required: true} }

func (*GuestIP) probeRule() probeRule { return probeRule{required: true} }

func (*RestartDaemon) probeRule() probeRule { return probeRule{required: true, gap: true} }

func (StartVM) probeRule() probeRule { return probeRule{markedWithin: true} }

// validate checks that each VM is late and started once, and the probe.
func (s StartVM) validate(v *validator, at stepAt) error {
	st := at.st
	err := v.eachName(s, at.path, "VM", func(name, p string) error {
		if err := v.stoppedLateVM(name, p, st, " (set late: true in topology.vms to start it in a step)", "started twice"); err != nil {
			return err
		}
		st.running[name] = true
		return nil
	})
	if err != nil {
		return err
	}
	return s.validateProbe(v, at.s, at.idx, at.stepPath)
}

// validateProbe checks a startVM step's probe: every VM sends IPv4 to
// the peer and an ovnBaseline step before measured OVN's own time.
func (StartVM) validateProbe(v *validator, s *Step, idx int, path string) error {
	if s.Probe == nil {
		return nil
	}
	if !slices.ContainsFunc(v.sc.Steps[:idx], func(x Step) bool { return x.OVNBaseline != nil }) {
		return v.d.errAt(path+".probe", "a startVM probe is judged against OVN's own port-group change time: add an ovnBaseline step before")
	}
	for i, name := range s.StartVM {
		vm := v.vms[name]
		if vm.Addresses.V4 == "" {
			return v.d.errAt(fmt.Sprintf("%s.startVM[%d]", path, i), "VM %q has no IPv4 address (the probe is IPv4)", name)
		}
		if err := v.v4Peer(s.Probe.Peer, vm.Network, path+".probe.peer"); err != nil {
			return err
		}
	}
	return nil
}

// Describe: the VMs.
func (s StartVM) Describe(*Step) string { return "VMs " + strings.Join(s, ", ") }

func (m *Migrate) validate(v *validator, at stepAt) error {
	path, st := at.path, at.st
	if err := v.runningVM(m.VM, path+".vm", st); err != nil {
		return err
	}
	switch {
	case m.To < 0 || m.To >= v.sc.Topology.Nodes:
		return v.d.errAt(path+".to", "node %d out of range 0..%d", m.To, v.sc.Topology.Nodes-1)
	case m.To == st.node[m.VM]:
		return v.d.errAt(path+".to", "VM %q already runs on node %d at this step", m.VM, m.To)
	case m.Mode != MigratePerPodLSP && m.Mode != MigrateMultiChassis:
		return v.d.errAt(path+".mode", "invalid mode %q (want %s or %s)", m.Mode, MigratePerPodLSP, MigrateMultiChassis)
	case m.LateTargetLSP && m.Mode != MigratePerPodLSP:
		return v.d.errAt(path+".lateTargetLSP", "only a %s migration creates a target LSP (a %s migration keeps one LSP)", MigratePerPodLSP, m.Mode)
	}
	st.node[m.VM] = m.To
	return nil
}

// Describe: the VM, the target node and the mode.
func (m *Migrate) Describe(*Step) string {
	return fmt.Sprintf("VM %s to node %d (%s)", m.VM, m.To, m.Mode)
}

func (r RestartLauncher) validate(v *validator, at stepAt) error {
	return v.eachName(r, at.path, "VM", func(name, p string) error {
		return v.runningVM(name, p, at.st)
	})
}

// Describe: the VMs.
func (r RestartLauncher) Describe(*Step) string { return "VMs " + strings.Join(r, ", ") }

func (g *GuestIP) validate(v *validator, at stepAt) error {
	if err := v.runningVM(g.VM, at.path+".vm", at.st); err != nil {
		return err
	}
	if _, err := netip.ParsePrefix(g.V4); err != nil || !netip.MustParsePrefix(g.V4).Addr().Is4() {
		return v.d.errAt(at.path+".v4", "invalid IPv4 address %q (want CIDR form, e.g. 10.10.0.81/16)", g.V4)
	}
	at.st.readdr[g.VM] = true
	return nil
}

// Describe: the VM and its new address.
func (g *GuestIP) Describe(*Step) string {
	return fmt.Sprintf("VM %s guest IPv4 %s", g.VM, g.V4)
}

// validate checks the daemon, the mode and that the probe VM runs on
// the restarted node.
func (r *RestartDaemon) validate(v *validator, at stepAt) error {
	path, st := at.path, at.st
	if err := v.runningVM(r.VM, path+".vm", st); err != nil {
		return err
	}
	switch {
	case st.readdr[r.VM]:
		return v.d.errAt(path+".vm", "VM %q changed its guest address in a guestIP step (the probe uses the topology address)", r.VM)
	case v.sc.VM(r.VM).Addresses.V4 == "":
		return v.d.errAt(path+".vm", "VM %q has no IPv4 address (the daemon probe is IPv4)", r.VM)
	case !slices.Contains([]string{DaemonOVNController, DaemonVSwitchd, DaemonNB}, r.Daemon):
		return v.d.errAt(path+".daemon", "invalid daemon %q (want %s, %s or %s)", r.Daemon, DaemonOVNController, DaemonVSwitchd, DaemonNB)
	case r.Mode != RestartKill && r.Mode != RestartGraceful:
		return v.d.errAt(path+".mode", "invalid mode %q (want %s or %s)", r.Mode, RestartKill, RestartGraceful)
	case r.Node < 0 || r.Node >= v.sc.Topology.Nodes:
		return v.d.errAt(path+".node", "node %d out of range 0..%d", r.Node, v.sc.Topology.Nodes-1)
	case r.Daemon != DaemonNB && r.Node != st.node[r.VM]:
		return v.d.errAt(path+".node", "the probe VM %q runs on node %d at this step, not on node %d: the restart would not touch its traffic", r.VM, st.node[r.VM], r.Node)
	}
	return nil
}

// Describe: the restart and the probe's VM.
func (r *RestartDaemon) Describe(*Step) string {
	return fmt.Sprintf("%s %s on node %d, probe from VM %s", r.Mode, r.Daemon, r.Node, r.VM)
}
