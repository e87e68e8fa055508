package scenarios

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/nqos/nqos/scenarios/manifests"
)

// The core step kinds: objects applied, deleted and edited, a VM
// relabelled, flows started and stopped, conditions and NB rows checked.
// Each kind is one type holding its fields, its validation and its
// one-line description.

// The core step kinds: objects applied, deleted and edited, a VM
// relabelled, flows started and stopped, conditions and NB rows checked.

// Apply creates or updates the objects of manifests (by id).
type Apply []string

// Delete deletes the objects of manifests (by id).
type Delete []string

// Edit applies an RFC 7386 JSON merge patch to a manifest's current
// revision and updates the object in the cluster.
type Edit struct {
	Manifest string    `yaml:"manifest,required"`
	Patch    yaml.Node `yaml:"patch,required"`
}

// LabelChange sets and removes labels on a VM's pod.
type LabelChange struct {
	VM     string            `yaml:"vm,required"`
	Set    map[string]string `yaml:"set"`
	Remove []string          `yaml:"remove"`
}

// Start starts flows (by name) together.
type Start []string

// Stop stops flows (by name) and judges them.
type Stop []string

// Wait polls its checks until they hold or its timeout passes.
type Wait Check

// Expect runs its checks once.
type Expect Check

// DefaultWaitTimeout bounds a wait step without a timeout.
const DefaultWaitTimeout = 30 * time.Second

func (a Apply) validate(v *validator, at stepAt) error {
	return v.applyOrDelete(at.s, a, at.path, at.st, true)
}

func (d Delete) validate(v *validator, at stepAt) error {
	return v.applyOrDelete(at.s, d, at.path, at.st, false)
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
		case apply && m.IsMigration():
			s.Objects = append(s.Objects, m)
			return v.applyMigration(s, m, ids, fmt.Sprintf("%s[%d]", path, i), st)
		}
		st.applied[id] = apply
		s.Objects = append(s.Objects, m)
	}
	if s.Probe != nil {
		return v.d.errAt(strings.TrimSuffix(path, "."+s.Kind())+".probe", "an apply step runs under a probe only when it creates a %s KubeVirt runs", manifests.MigrationKind)
	}
	return nil
}

func (e *Edit) validate(v *validator, at stepAt) error {
	s, path, st := at.s, at.path, at.st
	m, ok := st.current[e.Manifest]
	switch {
	case !ok:
		return v.d.errAt(path+".manifest", "unknown manifest %q", e.Manifest)
	case !st.applied[e.Manifest]:
		return v.d.errAt(path+".manifest", "edits manifest %q, which is not applied at this step", e.Manifest)
	case m.IsMigration():
		return v.d.errAt(path+".manifest", "manifest %q is a %s: its spec is immutable (a new migration is a new object: another manifest)", e.Manifest, m.Kind)
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

func (l *LabelChange) validate(v *validator, at stepAt) error {
	path, st := at.path, at.st
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

func (s Start) validate(v *validator, at stepAt) error {
	return v.traffic(s, true, at.idx, at.path, at.st)
}

func (s Stop) validate(v *validator, at stepAt) error {
	return v.traffic(s, false, at.idx, at.path, at.st)
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
		case start && v.vms[f.To] != nil && !st.running[f.To]:
			return v.d.errAt(p, "flow %q goes to VM %q, which is late and not started at this step", name, f.To)
		case !start && (!st.started[name] || st.stopped[name]):
			return v.d.errAt(p, "stops flow %q, which is not running at this step", name)
		}
		if start {
			st.started[name] = true
			st.group[name] = idx
			if err := v.resolvePolicing(f, func(id string) *Manifest { return st.current[id] }, p, names); err != nil {
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

func (w *Wait) validate(v *validator, at stepAt) error {
	if w.Timeout == 0 {
		w.Timeout = DefaultWaitTimeout
	}
	return (*Check)(w).validate(v, at.path, at.st)
}

func (e *Expect) validate(v *validator, at stepAt) error {
	if e.Timeout != 0 {
		return v.d.errAt(at.path+".timeout", "expect checks once; use a wait step to poll with a timeout")
	}
	return (*Check)(e).validate(v, at.path, at.st)
}

// Describe: the objects (manifest revisions) applied.
func (Apply) Describe(s *Step) string {
	if s.VMIM != nil {
		return describeMigration(s.VMIM)
	}
	return objectsSummary(s)
}

// Describe: the objects deleted.
func (Delete) Describe(s *Step) string { return objectsSummary(s) }

// Describe: the object's new revision.
func (*Edit) Describe(s *Step) string { return objectsSummary(s) }

// Describe: the VM and its label changes.
func (l *LabelChange) Describe(*Step) string {
	d := fmt.Sprintf("VM %s set %v", l.VM, sortedPairs(l.Set))
	if len(l.Remove) > 0 {
		d += fmt.Sprintf(" remove %v", l.Remove)
	}
	return d
}

// Describe: the flows.
func (s Start) Describe(*Step) string { return strings.Join(s, ", ") }

// Describe: the flows.
func (s Stop) Describe(*Step) string { return strings.Join(s, ", ") }

// Describe: what is checked and the timeout.
func (w *Wait) Describe(*Step) string {
	return (*Check)(w).describe() + fmt.Sprintf(" within %s", w.Timeout)
}

// Describe: what is checked.
func (e *Expect) Describe(*Step) string { return (*Check)(e).describe() }

func objectsSummary(s *Step) string {
	keys := make([]string, len(s.Objects))
	for i, m := range s.Objects {
		keys[i] = m.Key()
		if m.Revision > 0 {
			keys[i] += fmt.Sprintf(" (revision %d)", m.Revision)
		}
	}
	return strings.Join(keys, ", ")
}

func sortedPairs(m map[string]string) []string {
	var out []string
	for _, k := range slices.Sorted(maps.Keys(m)) {
		out = append(out, k+"="+m[k])
	}
	return out
}
