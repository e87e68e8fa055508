package scenarios

import (
	"net/netip"
	"slices"
)

// lifecycleKinds are the step kinds that run under a probe.
var lifecycleKinds = []string{"migrate", "restartLauncher", "guestIP", "restartDaemon", "restartController", "upgrade"}

// gapKinds are the lifecycle steps that measure (and need) maxGap.
var gapKinds = []string{"restartDaemon", "restartController", "upgrade"}

// probe checks that exactly the lifecycle steps have a probe and resolves
// its object.
func (v *validator) probe(s *Step, kind, path string, st *stepState) error {
	p := s.Probe
	needs := slices.Contains(lifecycleKinds, kind)
	switch {
	case p == nil && needs:
		return v.d.errAt(path, "a %s step needs a probe (peer, object, dscp)", kind)
	case p == nil:
		return nil
	case !needs && kind != "startVM": // startVM: optional probe (validate_adversarial.go)
		return v.d.errAt(path+".probe", "only migrate, restartLauncher, guestIP, restartDaemon, restartController, upgrade and startVM steps run under a probe")
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
	case slices.Contains(gapKinds, kind) && p.MaxGap <= 0:
		return v.d.errAt(path+".maxGap", "required for a %s step (the longest tolerated time without a marked packet)", kind)
	case !slices.Contains(gapKinds, kind) && p.MaxGap != 0:
		return v.d.errAt(path+".maxGap", "only restartDaemon, restartController and upgrade steps measure the marking gap")
	case kind == "startVM" && p.MarkedWithin <= 0:
		return v.d.errAt(path+".markedWithin", "required for a startVM probe (the tolerance on the first marked packet)")
	case kind != "startVM" && p.MarkedWithin != 0:
		return v.d.errAt(path+".markedWithin", "only a startVM probe times the first marked packet")
	case kind == "startVM" && p.MaxLost != 0:
		return v.d.errAt(path+".maxLost", "a startVM probe starts before the port exists: its loss is not judged")
	}
	p.Manifest = m
	return nil
}

// lifecycle checks a migrate, restartLauncher or guestIP step.
func (v *validator) lifecycle(s *Step, kind, path string, st *stepState) error {
	switch kind {
	case "migrate":
		return v.migrate(s.Migrate, path+".migrate", st)
	case "restartDaemon":
		return v.restartDaemon(s.RestartDaemon, path+".restartDaemon", st)
	case "guestIP":
		g := s.GuestIP
		if err := v.runningVM(g.VM, path+".guestIP.vm", st); err != nil {
			return err
		}
		if _, err := netip.ParsePrefix(g.V4); err != nil || !netip.MustParsePrefix(g.V4).Addr().Is4() {
			return v.d.errAt(path+".guestIP.v4", "invalid IPv4 address %q (want CIDR form, e.g. 10.10.0.81/16)", g.V4)
		}
		st.readdr[g.VM] = true
		return nil
	}
	return v.eachName(s.RestartLauncher, path+".restartLauncher", "VM", func(name, p string) error {
		return v.runningVM(name, p, st)
	})
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
