package scenarios

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/nqos/nqos/api/v1alpha1"
)

// DefaultWaitTimeout bounds a wait step without a timeout.
const DefaultWaitTimeout = 30 * time.Second

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
	return acts[0].validate(v, stepAt{s: s, idx: idx, path: path + "." + kinds[0], stepPath: path, st: st})
}

func (v *validator) applyOrDelete(s *Step, ids []string, path string, st *stepState, apply bool) error {
	if len(ids) == 0 {
		return v.d.errAt(path, "names no manifest")
	}
	for i, id := range ids {
		m, ok := st.current[id]
		switch {
		case !ok:
			return v.d.errAt(fmt.Sprintf("%s[%d]", path, i), "unknown manifest %q", id)
		case m.Ignored:
			return v.d.errAt(fmt.Sprintf("%s[%d]", path, i), "manifest %q is a %s, a kind the testbed does not model (it is ignored)", id, m.Kind)
		case m.Topological():
			return v.d.errAt(fmt.Sprintf("%s[%d]", path, i), "manifest %q is a %s: it shapes the topology at boot and is not applied (a halted VirtualMachine starts in a startVM step)", id, m.Kind)
		case !apply && !st.applied[id]:
			return v.d.errAt(fmt.Sprintf("%s[%d]", path, i), "deletes manifest %q, which is not applied at this step", id)
		}
		st.applied[id] = apply
		s.Objects = append(s.Objects, m)
	}
	return nil
}

func (v *validator) edit(s *Step, path string, st *stepState) error {
	e := s.Edit
	m, ok := st.current[e.Manifest]
	switch {
	case !ok:
		return v.d.errAt(path+".manifest", "unknown manifest %q", e.Manifest)
	case !st.applied[e.Manifest]:
		return v.d.errAt(path+".manifest", "edits manifest %q, which is not applied at this step", e.Manifest)
	}
	var patch map[string]any
	if e.Patch.Decode(&patch) != nil || patch == nil {
		return v.d.errAt(path+".patch", "expected a merge patch (a mapping)")
	}
	next, err := m.patched(patch)
	if err != nil {
		return v.d.errAt(path+".patch", "%v", err)
	}
	if err := v.decodeManifest(next, path+".patch"); err != nil {
		return err
	}
	st.current[e.Manifest] = next
	s.Objects = []*Manifest{next}
	return nil
}

// startVM checks that each VM is late and started once.
func (v *validator) startVM(names []string, path string, st *stepState) error {
	return v.eachName(names, path, "VM", func(name, p string) error {
		vm, ok := v.vms[name]
		switch {
		case !ok:
			return v.d.errAt(p, "unknown VM %q", name)
		case !vm.Late:
			return v.d.errAt(p, "VM %q is created at provisioning (set late: true in topology.vms to start it in a step)", name)
		case st.running[name]:
			return v.d.errAt(p, "VM %q is started twice", name)
		}
		st.running[name] = true
		return nil
	})
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

func (v *validator) label(l *LabelChange, path string, st *stepState) error {
	if err := v.runningVM(l.VM, path+".vm", st); err != nil {
		return err
	}
	if len(l.Set) == 0 && len(l.Remove) == 0 {
		return v.d.errAt(path, "label change sets and removes nothing")
	}
	for _, k := range l.Remove {
		if _, ok := l.Set[k]; ok {
			return v.d.errAt(path+".remove", "label %q is both set and removed", k)
		}
	}
	return nil
}

// traffic checks a start (start true) or stop of flows.
func (v *validator) traffic(names []string, start bool, idx int, path string, st *stepState) error {
	if len(names) == 0 {
		return v.d.errAt(path, "names no flow")
	}
	for i, name := range names {
		p := fmt.Sprintf("%s[%d]", path, i)
		f, ok := v.flows[name]
		switch {
		case !ok:
			return v.d.errAt(p, "unknown flow %q", name)
		case start && st.started[name]:
			return v.d.errAt(p, "flow %q is started twice (define a second flow)", name)
		case start && !st.running[f.From]:
			return v.d.errAt(p, "flow %q is sent by VM %q, which is late and not started at this step", name, f.From)
		case start && st.readdr[f.From]:
			return v.d.errAt(p, "flow %q is sent by VM %q, whose guest address a guestIP step changed (flows use the topology address)", name, f.From)
		case start && v.vms[f.To] != nil && !st.running[f.To]:
			return v.d.errAt(p, "flow %q goes to VM %q, which is late and not started at this step", name, f.To)
		case !start && (!st.started[name] || st.stopped[name]):
			return v.d.errAt(p, "stops flow %q, which is not running at this step", name)
		}
		if start {
			st.started[name] = true
			st.group[name] = idx
			if err := v.resolvePolicing(f, func(id string) *Manifest { return st.current[id] }, p); err != nil {
				return err
			}
		} else {
			st.stopped[name] = true
		}
	}
	if start {
		return nil
	}
	return v.wholeGroups(names, path, st)
}

// wholeGroups checks that a stop step stops every flow started together
// with the flows it names: flows started together are captured and judged
// together (they may share a meter).
func (v *validator) wholeGroups(names []string, path string, st *stepState) error {
	for _, f := range v.sc.Flows {
		if !st.started[f.Name] || slices.Contains(names, f.Name) {
			continue
		}
		for _, n := range names {
			if st.group[n] == st.group[f.Name] {
				return v.d.errAt(path, "stops %q but not %q, started with it in steps[%d]", n, f.Name, st.group[n])
			}
		}
	}
	return nil
}

func (v *validator) check(c *Check, path string, st *stepState) error {
	if len(c.Objects) == 0 && !c.NoOwnedRows {
		return v.d.errAt(path, "checks nothing (set objects or noOwnedRows)")
	}
	for i := range c.Objects {
		if err := v.objectCheck(&c.Objects[i], fmt.Sprintf("%s.objects[%d]", path, i), st); err != nil {
			return err
		}
	}
	return nil
}

func (v *validator) objectCheck(oc *ObjectCheck, path string, st *stepState) error {
	m, ok := st.current[oc.Manifest]
	if !ok || m.QoS == nil {
		return v.d.errAt(path+".manifest", "unknown NetworkQoS manifest %q", oc.Manifest)
	}
	oc.Object = m
	if oc.Condition == nil && oc.Rows == nil && oc.Aggregate == nil {
		return v.d.errAt(path, "checks nothing (set condition, rows or aggregate)")
	}
	if oc.Aggregate != nil {
		if err := oc.Aggregate.validate(v, path+".aggregate"); err != nil {
			return err
		}
	}
	if c := oc.Condition; c != nil {
		if c.Type == "" {
			c.Type = "Accepted"
		}
		if !slices.Contains([]string{"True", "False", "Unknown"}, c.Status) {
			return v.d.errAt(path+".condition.status", "invalid status %q (want \"True\", \"False\" or \"Unknown\")", c.Status)
		}
	}
	if oc.Rows != nil {
		return v.rowsCheck(oc.Rows, m, path+".rows", st)
	}
	return nil
}

func (v *validator) rowsCheck(r *RowsCheck, m *Manifest, path string, st *stepState) error {
	if r.None && (r.QoS != nil || r.PortGroupMembers != nil || r.AddressSets != nil) {
		return v.d.errAt(path+".none", "none excludes qos, portGroupMembers and addressSets")
	}
	if !r.None && r.QoS == nil && r.PortGroupMembers == nil && r.AddressSets == nil {
		return v.d.errAt(path, "checks nothing (set none, qos, portGroupMembers or addressSets)")
	}
	for i, vm := range r.PortGroupMembers {
		if err := v.runningVM(vm, fmt.Sprintf("%s.portGroupMembers[%d]", path, i), st); err != nil {
			return err
		}
	}
	for i := range r.QoS {
		if err := v.qosCheck(&r.QoS[i], m, fmt.Sprintf("%s.qos[%d]", path, i)); err != nil {
			return err
		}
	}
	return nil
}

// qosCheck resolves the row's priority, DSCP and bandwidth from the rule.
func (v *validator) qosCheck(q *QoSCheck, m *Manifest, path string) error {
	egress := m.QoS.Spec.Egress
	if q.Rule < 0 || q.Rule >= len(egress) {
		return v.d.errAt(path+".rule", "%s (revision %d) has egress rules 0..%d, not %d", m.Key(), m.Revision, len(egress)-1, q.Rule)
	}
	if q.Network == "" {
		if len(v.sc.Topology.Networks) != 1 {
			return v.d.errAt(path+".network", "required when the topology has several networks")
		}
		q.Network = v.sc.Topology.Networks[0].Name
	}
	if v.networks[q.Network] == nil {
		return v.d.errAt(path+".network", "unknown network %q", q.Network)
	}
	if !strings.Contains(q.Match, "@$pg") {
		return v.d.errAt(path+".match", "match %q does not name the source port group (write inport == @$pg)", q.Match)
	}
	r := egress[q.Rule]
	q.Priority = RulePriority(m.QoS, q.Rule)
	q.DSCP = r.DSCP
	if r.Bandwidth != nil {
		q.RateKbps, q.BurstKbit = r.Bandwidth.Rate, r.Bandwidth.Burst
	}
	return nil
}

// RulePriority is the OVN priority of egress rule i of a NetworkQoS.
func RulePriority(nq *v1alpha1.NetworkQoS, i int) int {
	return 10000 + nq.Spec.Priority*10 + i
}
