package scenarios

import (
	"fmt"
	"net/netip"
	"slices"
	"strings"
)

// probe checks that exactly the kinds that run under a probe have one,
// as their probeRule says, and resolves its object.
func (v *validator) probe(s *Step, kind string, act Action, path string, st *stepState) error {
	p := s.Probe
	pr, isProbed := act.(probed)
	var rule probeRule
	if isProbed {
		rule = pr.probeRule()
	}
	switch {
	case p == nil && rule.required:
		return v.d.errAt(path, "a %s step needs a probe (peer, object, dscp)", kind)
	case p == nil:
		return nil
	case !isProbed:
		return v.d.errAt(path+".probe", "only %s steps run under a probe", probedKinds(func(probeRule) bool { return true }))
	}
	path += ".probe"
	if v.sc.Host(p.Peer) == nil {
		return v.d.errAt(path+".peer", "unknown external host %q", p.Peer)
	}
	m, ok := st.current[p.Object]
	switch {
	case !ok || m.QoS == nil:
		return v.d.errAt(path+".object", "unknown NetworkQoS manifest %q", p.Object)
	case !st.applied[p.Object]:
		return v.d.errAt(path+".object", "NetworkQoS manifest %q is not applied at this step", p.Object)
	case p.DSCP < 0 || p.DSCP > 63:
		return v.d.errAt(path+".dscp", "DSCP %d out of range 0..63", p.DSCP)
	case p.MaxUnmarked < 0:
		return v.d.errAt(path+".maxUnmarked", "must not be negative")
	case p.MaxLost < 0:
		return v.d.errAt(path+".maxLost", "must not be negative")
	case rule.gap && p.MaxGap <= 0:
		return v.d.errAt(path+".maxGap", "required for a %s step (the longest tolerated time without a marked packet)", kind)
	case !rule.gap && p.MaxGap != 0:
		return v.d.errAt(path+".maxGap", "only %s steps measure the marking gap", probedKinds(func(r probeRule) bool { return r.gap }))
	case rule.markedWithin && p.MarkedWithin <= 0:
		return v.d.errAt(path+".markedWithin", "required for a %s probe (the tolerance on the first marked packet)", kind)
	case !rule.markedWithin && p.MarkedWithin != 0:
		return v.d.errAt(path+".markedWithin", "only a %s probe times the first marked packet", probedKinds(func(r probeRule) bool { return r.markedWithin }))
	case rule.markedWithin && p.MaxLost != 0:
		return v.d.errAt(path+".maxLost", "a %s probe starts before the port exists: its loss is not judged", kind)
	}
	p.Manifest = m
	return nil
}

func (*Migrate) probeRule() probeRule        { return probeRule{required: true} }
func (RestartLauncher) probeRule() probeRule { return probeRule{required: true} }
func (*GuestIP) probeRule() probeRule        { return probeRule{required: true} }
func (*RestartDaemon) probeRule() probeRule  { return probeRule{required: true, gap: true} }
func (StartVM) probeRule() probeRule         { return probeRule{markedWithin: true} }

func (m *Migrate) validate(v *validator, at stepAt) error { return v.migrate(m, at.path, at.st) }

func (r *RestartDaemon) validate(v *validator, at stepAt) error {
	return v.restartDaemon(r, at.path, at.st)
}

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

func (r RestartLauncher) validate(v *validator, at stepAt) error {
	return v.eachName(r, at.path, "VM", func(name, p string) error {
		return v.runningVM(name, p, at.st)
	})
}

func (s StartVM) validate(v *validator, at stepAt) error {
	if err := v.startVM(s, at.path, at.st); err != nil {
		return err
	}
	return v.startVMProbe(at.s, at.idx, at.stepPath)
}

// Describe: the VM, the target node and the mode.
func (m *Migrate) Describe(*Step) string {
	return fmt.Sprintf("VM %s to node %d (%s)", m.VM, m.To, m.Mode)
}

// Describe: the VMs.
func (r RestartLauncher) Describe(*Step) string { return "VMs " + strings.Join(r, ", ") }

// Describe: the VMs.
func (s StartVM) Describe(*Step) string { return "VMs " + strings.Join(s, ", ") }

// Describe: the VM and its new address.
func (g *GuestIP) Describe(*Step) string {
	return fmt.Sprintf("VM %s guest IPv4 %s", g.VM, g.V4)
}

// Describe: the restart and the probe's VM.
func (r *RestartDaemon) Describe(*Step) string {
	return fmt.Sprintf("%s %s on node %d, probe from VM %s", r.Mode, r.Daemon, r.Node, r.VM)
}

func (v *validator) migrate(m *Migrate, path string, st *stepState) error {
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

func (v *validator) restartDaemon(r *RestartDaemon, path string, st *stepState) error {
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
