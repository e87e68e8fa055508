package scenarios

import (
	"fmt"
	"maps"
	"slices"
	"strings"
)

// The core step kinds: objects applied, deleted and edited, a VM
// relabelled, flows started and stopped, conditions and NB rows checked.

// Apply creates or updates the objects of manifests (by id).
type Apply []string

// Delete deletes the objects of manifests (by id).
type Delete []string

// StartVM starts late VMs (by name).
type StartVM []string

// RestartLauncher recreates the launcher pods of VMs (by name).
type RestartLauncher []string

// Start starts flows (by name) together.
type Start []string

// Stop stops flows (by name) and judges them.
type Stop []string

// Wait polls its checks until they hold or its timeout passes.
type Wait Check

// Expect runs its checks once.
type Expect Check

func (a Apply) validate(v *validator, at stepAt) error {
	return v.applyOrDelete(at.s, a, at.path, at.st, true)
}

func (d Delete) validate(v *validator, at stepAt) error {
	return v.applyOrDelete(at.s, d, at.path, at.st, false)
}

func (e *Edit) validate(v *validator, at stepAt) error { return v.edit(at.s, at.path, at.st) }

func (l *LabelChange) validate(v *validator, at stepAt) error { return v.label(l, at.path, at.st) }

func (s Start) validate(v *validator, at stepAt) error {
	return v.traffic(s, true, at.idx, at.path, at.st)
}

func (s Stop) validate(v *validator, at stepAt) error {
	return v.traffic(s, false, at.idx, at.path, at.st)
}

func (w *Wait) validate(v *validator, at stepAt) error {
	if w.Timeout == 0 {
		w.Timeout = DefaultWaitTimeout
	}
	return v.check((*Check)(w), at.path, at.st)
}

func (e *Expect) validate(v *validator, at stepAt) error {
	if e.Timeout != 0 {
		return v.d.errAt(at.path+".timeout", "expect checks once; use a wait step to poll with a timeout")
	}
	return v.check((*Check)(e), at.path, at.st)
}

// Describe: the objects (manifest revisions) applied.
func (Apply) Describe(s *Step) string { return objectsSummary(s) }

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

func (c *Check) describe() string {
	var parts []string
	for _, o := range c.Objects {
		parts = append(parts, o.Object.Key())
	}
	if c.NoOwnedRows {
		parts = append(parts, "no NetworkQoS-owned rows")
	}
	return strings.Join(parts, ", ")
}

func sortedPairs(m map[string]string) []string {
	var out []string
	for _, k := range slices.Sorted(maps.Keys(m)) {
		out = append(out, k+"="+m[k])
	}
	return out
}
