package scenarios

import (
	"fmt"
	"slices"
	"strings"
)

// ControllerSteps are the step kinds acting on the controller process.
type ControllerSteps struct {
	RestartController *RestartController `yaml:"restartController"`
	Upgrade           *Upgrade           `yaml:"upgrade"`
}

// Modes of a restartController step.
const (
	ControllerGraceful = "graceful" // SIGTERM, clean exit, then a new process
	ControllerKill9    = "kill9"    // SIGKILL, then a new process
)

// RestartController stops the controller process (gracefully or with
// SIGKILL) and starts a new one while a VM's marked probe stream runs.
// With a burst (Apply, Delete), the step itself changes those objects
// and, with AfterTx > 0, stops the controller right after the AfterTx-th
// NB transaction since the burst began (mid-reconcile).
type RestartController struct {
	Mode    string   `yaml:"mode,required"`
	VM      string   `yaml:"vm,required"` // sends the probe stream to the probe's peer
	Apply   []string `yaml:"apply"`
	Delete  []string `yaml:"delete"`
	AfterTx int      `yaml:"afterTx"`

	// Applied and Deleted are the burst's manifest revisions, in order.
	Applied []*Manifest `yaml:"-"`
	Deleted []*Manifest `yaml:"-"`
}

// Upgrade pre-seeds the NB with legacy rows for NetworkQoS objects (a
// source address set of the selected VMs' IPv4 addresses, as the
// previous controller generation wrote them), waits until the probe is
// marked by them, then starts the controller, which migrates them.
type Upgrade struct {
	Legacy []string `yaml:"legacy,required"` // NetworkQoS manifest ids
	VM     string   `yaml:"vm,required"`     // sends the probe stream

	// Objects are the legacy objects' manifest revisions.
	Objects []*Manifest `yaml:"-"`
}

func (*RestartController) probeRule() probeRule { return probeRule{required: true, gap: true} }

func (*Upgrade) probeRule() probeRule { return probeRule{required: true, gap: true} }

func (r *RestartController) validate(v *validator, at stepAt) error {
	path, st := at.path, at.st
	if !st.controllerUp {
		return v.d.errAt(path, "the controller does not run at this step (controller.boot is false and no upgrade step started it)")
	}
	if err := v.probeVM(r.VM, path+".vm", st); err != nil {
		return err
	}
	if r.Mode != ControllerGraceful && r.Mode != ControllerKill9 {
		return v.d.errAt(path+".mode", "invalid mode %q (want %s or %s)", r.Mode, ControllerGraceful, ControllerKill9)
	}
	var err error
	if r.Applied, err = v.burst(r.Apply, path+".apply", st, true); err != nil {
		return err
	}
	if r.Deleted, err = v.burst(r.Delete, path+".delete", st, false); err != nil {
		return err
	}
	// an apply commits at most one NB transaction, a delete two (rows,
	// then port group and address sets)
	most := len(r.Apply) + 2*len(r.Delete)
	switch {
	case r.AfterTx < 0:
		return v.d.errAt(path+".afterTx", "must not be negative")
	case r.AfterTx > 0 && most == 0:
		return v.d.errAt(path+".afterTx", "needs a burst (apply or delete) whose NB transactions it counts")
	case r.AfterTx > most:
		return v.d.errAt(path+".afterTx", "the burst commits at most %d NB transaction(s) (one per apply, two per delete), not %d", most, r.AfterTx)
	}
	return nil
}

// burst resolves the manifests a restartController step applies or
// deletes and records them as applied or not.
func (v *validator) burst(ids []string, path string, st *stepState, apply bool) ([]*Manifest, error) {
	var out []*Manifest
	for i, id := range ids {
		p := fmt.Sprintf("%s[%d]", path, i)
		m, ok := st.current[id]
		switch {
		case !ok:
			return nil, v.d.errAt(p, "unknown manifest %q", id)
		case slices.Contains(ids[:i], id):
			return nil, v.d.errAt(p, "manifest %q is named twice", id)
		case !apply && !st.applied[id]:
			return nil, v.d.errAt(p, "deletes manifest %q, which is not applied at this step", id)
		}
		st.applied[id] = apply
		out = append(out, m)
	}
	return out, nil
}

// Describe: the mode, the burst, the kill point and the probe's VM.
func (r *RestartController) Describe(*Step) string {
	s := r.Mode + " controller restart"
	var burst []string
	for _, m := range r.Applied {
		burst = append(burst, "apply "+m.Key())
	}
	for _, m := range r.Deleted {
		burst = append(burst, "delete "+m.Key())
	}
	if len(burst) > 0 {
		s += " during a burst (" + strings.Join(burst, ", ") + ")"
	}
	if r.AfterTx > 0 {
		s += fmt.Sprintf(" right after NB transaction %d", r.AfterTx)
	}
	return s + ", probe from VM " + r.VM
}

func (u *Upgrade) validate(v *validator, at stepAt) error {
	p, path, st := at.s.Probe, at.path, at.st
	if st.controllerUp {
		return v.d.errAt(path, "the controller already runs at this step (an upgrade starts it: set controller: {boot: false})")
	}
	if err := v.probeVM(u.VM, path+".vm", st); err != nil {
		return err
	}
	if len(u.Legacy) == 0 {
		return v.d.errAt(path+".legacy", "names no NetworkQoS manifest")
	}
	for i, id := range u.Legacy {
		lp := fmt.Sprintf("%s.legacy[%d]", path, i)
		m, ok := st.current[id]
		switch {
		case !ok || m.QoS == nil:
			return v.d.errAt(lp, "unknown NetworkQoS manifest %q", id)
		case !st.applied[id]:
			return v.d.errAt(lp, "NetworkQoS manifest %q is not applied at this step (its legacy rows are derived from the object)", id)
		case slices.Contains(u.Legacy[:i], id):
			return v.d.errAt(lp, "manifest %q is named twice", id)
		}
		u.Objects = append(u.Objects, m)
	}
	if !slices.Contains(u.Legacy, p.Object) {
		return v.d.errAt(path+".legacy", "does not name the probe's object %q (the probe must watch a migrated object)", p.Object)
	}
	st.controllerUp = true
	return nil
}

// Describe: the legacy objects and the probe's VM.
func (u *Upgrade) Describe(*Step) string {
	return fmt.Sprintf("legacy rows for %s, then the controller starts; probe from VM %s", strings.Join(u.Legacy, ", "), u.VM)
}
