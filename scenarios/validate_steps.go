package scenarios

import (
	"fmt"
	"strings"
)

// stepState is what the step walk knows at each step.
type stepState struct {
	current map[string]*Manifest // latest revision per manifest id
	applied map[string]bool
	started map[string]bool
	stopped map[string]bool
	group   map[string]int  // flow -> index of the step that started it
	running map[string]bool // VMs that exist at this step (late ones once started)
	node    map[string]int  // VM -> node index at this step
	readdr  map[string]bool // VMs whose guest address a step changed
	// controllerUp: the controller runs at this step
	controllerUp bool
	// zoneDown: node indexes whose zone controller is stopped
	zoneDown map[int]bool
}

func (v *validator) steps() error {
	st := &stepState{current: map[string]*Manifest{}, applied: map[string]bool{}, started: map[string]bool{}, stopped: map[string]bool{}, group: map[string]int{}, running: map[string]bool{}, node: map[string]int{}, readdr: map[string]bool{}, zoneDown: map[int]bool{}}
	st.controllerUp = v.sc.BootsController()
	for _, vm := range v.sc.Topology.VMs {
		st.running[vm.Name] = !vm.Late
		st.node[vm.Name] = vm.Node
	}
	for _, m := range v.sc.Manifests {
		st.current[m.ID] = m
	}
	if len(v.sc.Steps) == 0 {
		return v.d.errAt("steps", "at least one step is required")
	}
	for i := range v.sc.Steps {
		s := &v.sc.Steps[i]
		path := fmt.Sprintf("steps[%d]", i)
		s.Line = v.d.lines[path]
		if err := v.step(s, i, path, st); err != nil {
			return err
		}
	}
	for _, f := range v.sc.Flows {
		if st.started[f.Name] && !st.stopped[f.Name] {
			return v.d.errAt("steps", "flow %q is started but never stopped", f.Name)
		}
	}
	return v.controllerStarted(st)
}

func (v *validator) step(s *Step, idx int, path string, st *stepState) error {
	kinds, acts := s.actions()
	if len(kinds) != 1 {
		return v.d.errAt(path, "a step has exactly one action (%s), got %d: %s", strings.Join(Kinds(), ", "), len(kinds), strings.Join(kinds, ", "))
	}
	if err := v.probe(s, kinds[0], acts[0], path, st); err != nil {
		return err
	}
	if err := acts[0].validate(v, stepAt{s: s, idx: idx, path: path + "." + kinds[0], stepPath: path, st: st}); err != nil {
		return err
	}
	return v.refusedOnlyOnMigrations(s, path)
}

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

// eachName checks that a step's list names something (a what) and runs
// fn on each name with its field path.
func (v *validator) eachName(names []string, path, what string, fn func(name, p string) error) error {
	if len(names) == 0 {
		return v.d.errAt(path, "names no %s", what)
	}
	for i, name := range names {
		if err := fn(name, fmt.Sprintf("%s[%d]", path, i)); err != nil {
			return err
		}
	}
	return nil
}

// runningVM checks that a step refers to a VM that exists at that step.
func (v *validator) runningVM(name, path string, st *stepState) error {
	if _, ok := v.vms[name]; !ok {
		return v.d.errAt(path, "unknown VM %q", name)
	}
	if !st.running[name] {
		return v.d.errAt(path, "VM %q is late and not started at this step (add a startVM step before)", name)
	}
	return nil
}

// stoppedLateVM checks that a step refers to a late VM not running at
// that step; notLate ends the error of a VM created at provisioning,
// running says what a running VM is.
func (v *validator) stoppedLateVM(name, path string, st *stepState, notLate, running string) error {
	vm, ok := v.vms[name]
	switch {
	case !ok:
		return v.d.errAt(path, "unknown VM %q", name)
	case !vm.Late:
		return v.d.errAt(path, "VM %q is created at provisioning%s", name, notLate)
	case st.running[name]:
		return v.d.errAt(path, "VM %q is %s", name, running)
	}
	return nil
}

// v4VM checks that a VM exists at the step and sends from its topology
// IPv4 address (the raw frames and probes of these steps are IPv4).
func (v *validator) v4VM(name, path string, st *stepState) error {
	return v.topologyV4(name, path, st, "this step uses the topology address", "this step sends IPv4")
}

// probeVM checks the VM that sends a controller step's IPv4 probe stream.
func (v *validator) probeVM(name, path string, st *stepState) error {
	return v.topologyV4(name, path, st, "the probe uses the topology address", "the probe is IPv4")
}

// topologyV4 checks that VM name runs at the step and sends from its
// topology IPv4 address; readdr and noV4 say why in the errors of a
// changed and of a missing address.
func (v *validator) topologyV4(name, path string, st *stepState, readdr, noV4 string) error {
	if err := v.runningVM(name, path, st); err != nil {
		return err
	}
	switch {
	case st.readdr[name]:
		return v.d.errAt(path, "VM %q changed its guest address in a guestIP step (%s)", name, readdr)
	case v.vms[name].Addresses.V4 == "":
		return v.d.errAt(path, "VM %q has no IPv4 address (%s)", name, noV4)
	}
	return nil
}

// v4Peer checks an external host with an IPv4 address on network.
func (v *validator) v4Peer(name, network, path string) error {
	h := v.sc.Host(name)
	switch {
	case h == nil:
		return v.d.errAt(path, "unknown external host %q", name)
	case h.Network != network:
		return v.d.errAt(path, "host %q is on network %q, not %q", name, h.Network, network)
	case h.Addresses.V4 == "":
		return v.d.errAt(path, "host %q has no IPv4 address", name)
	}
	return nil
}

func (v *validator) uplinkIndex(i int, path string) error {
	if i < 0 || i >= v.sc.Topology.Nodes {
		return v.d.errAt(path, "node %d: the topology has nodes 0-%d", i, v.sc.Topology.Nodes-1)
	}
	return nil
}

// controllerStarted checks that a scenario whose controller does not
// boot starts it in an upgrade step.
func (v *validator) controllerStarted(st *stepState) error {
	if !st.controllerUp {
		return v.d.errAt("controller.boot", "the controller does not boot and no upgrade step starts it")
	}
	return nil
}
