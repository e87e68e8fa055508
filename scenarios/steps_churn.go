package scenarios

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"
	"k8s.io/apimachinery/pkg/util/validation"
)

// Churn bounds and defaults.
const (
	DefaultConverge  = 30 * time.Second      // churn: restore -> converged
	MaxChurnDuration = 30 * time.Second      // CI budget
	MinChurnInterval = 20 * time.Millisecond // below it operations queue up
)

// Churn (scenario 13-churn): for Duration, one operation per Interval
// (seeded, reproducible order): a VM of VMs gets label Label set to one
// of Values; a late VM of LateVMs is started (launcher pod, guest and
// LSP, with its topology labels) or stopped (launcher pod and LSP
// deleted, as ovnkube deletes the LSP when the pod goes); a NetworkQoS
// of Objects is created, edited (priority and podSelector Label value),
// made rejected by the merge patch Reject, accepted again, or deleted.
// Running late VMs are relabelled like VMs. A watcher audits every
// committed NB state:
// no QoS row references a missing port group or address set and no
// object whose rejected revision's Accepted=False status (for that
// generation) is visible owns a row. Afterwards every VM and object is
// put back as it was before the step (late VMs stopped), and the NB must equal the
// compiler's intent and every object's Accepted condition the
// compiler's verdict for its current generation within Converge.
type Churn struct {
	Duration time.Duration `yaml:"duration,required"`
	Interval time.Duration `yaml:"interval,required"`
	Seed     int           `yaml:"seed"`
	VMs      []string      `yaml:"vms,required"`
	LateVMs  []string      `yaml:"lateVMs"` // late VMs not started at the step
	Label    string        `yaml:"label,required"`
	Values   []string      `yaml:"values,required"`
	Objects  []string      `yaml:"objects,required"`
	Reject   yaml.Node     `yaml:"reject,required"`
	Converge time.Duration `yaml:"converge"` // default 30s

	// Base are the revisions of Objects in force at the step (what the
	// churn puts back), Applied whether each is applied then, and
	// RejectPatch the decoded Reject.
	Base        []*Manifest    `yaml:"-"`
	Applied     []bool         `yaml:"-"`
	RejectPatch map[string]any `yaml:"-"`
}

var labelKeyRE = regexp.MustCompile(`^([a-z0-9.-]+/)?[A-Za-z0-9]([A-Za-z0-9_.-]*[A-Za-z0-9])?$`)

func (c *Churn) validate(v *validator, at stepAt) error {
	path, st := at.path, at.st
	if c.Converge == 0 {
		c.Converge = DefaultConverge
	}
	switch {
	case c.Duration <= 0 || c.Duration > MaxChurnDuration:
		return v.d.errAt(path+".duration", "%s out of range (0, %s]", c.Duration, MaxChurnDuration)
	case c.Interval < MinChurnInterval || c.Interval >= c.Duration:
		return v.d.errAt(path+".interval", "%s out of range [%s, duration)", c.Interval, MinChurnInterval)
	case !labelKeyRE.MatchString(c.Label):
		return v.d.errAt(path+".label", "invalid label key %q", c.Label)
	case len(c.Values) < 2:
		return v.d.errAt(path+".values", "needs at least two label values to change between")
	case len(c.Objects) < 2:
		return v.d.errAt(path+".objects", "needs at least two NetworkQoS manifests (one is kept while another is deleted)")
	}
	for i, val := range c.Values {
		if errs := validation.IsValidLabelValue(val); len(errs) > 0 || val == "" || slices.Index(c.Values, val) != i {
			return v.d.errAt(fmt.Sprintf("%s.values[%d]", path, i), "invalid or duplicate label value %q", val)
		}
	}
	if err := v.eachName(c.VMs, path+".vms", "VM", func(name, p string) error {
		if countOf(c.VMs, name) > 1 {
			return v.d.errAt(p, "VM %q is listed twice", name)
		}
		return v.runningVM(name, p, st)
	}); err != nil {
		return err
	}
	if c.LateVMs != nil {
		if err := v.eachName(c.LateVMs, path+".lateVMs", "VM", func(name, p string) error { return c.lateVM(v, name, p, st) }); err != nil {
			return err
		}
	}
	for _, f := range v.sc.Flows {
		if st.started[f.Name] && !st.stopped[f.Name] {
			return v.d.errAt(path, "flow %q is running: a churn changes the classes its expectations assume (stop it before)", f.Name)
		}
	}
	if c.Reject.Decode(&c.RejectPatch) != nil || c.RejectPatch == nil {
		return v.d.errAt(path+".reject", "expected a merge patch (a mapping)")
	}
	c.Base, c.Applied = nil, nil
	return v.eachName(c.Objects, path+".objects", "NetworkQoS manifest", func(id, p string) error {
		return c.object(v, id, p, st)
	})
}

// lateVM checks a VM the churn starts and stops: a late VM not
// started at the step (the churn leaves it stopped again), listed once.
func (c *Churn) lateVM(v *validator, name, path string, st *stepState) error {
	if err := v.stoppedLateVM(name, path, st, ": the churn starts and stops late VMs only (set late: true in topology.vms)",
		"already started at this step: the churn starts and stops late VMs that are not running"); err != nil {
		return err
	}
	if countOf(c.LateVMs, name) > 1 {
		return v.d.errAt(path, "VM %q is listed twice", name)
	}
	return nil
}

// object resolves one churned object and checks that its edited and
// rejected revisions decode and pass the compiler's spec validation.
func (c *Churn) object(v *validator, id, path string, st *stepState) error {
	m, ok := st.current[id]
	switch {
	case !ok || m.QoS == nil:
		return v.d.errAt(path, "unknown NetworkQoS manifest %q", id)
	case countOf(c.Objects, id) > 1:
		return v.d.errAt(path, "manifest %q is listed twice", id)
	}
	edited, err := m.patched(ChurnEdit(c.Label, c.Values[0], 99))
	if err != nil {
		return v.d.errAt(path, "churn edit: %v", err)
	}
	if err := v.decodeManifest(edited, path); err != nil {
		return err
	}
	rejected, err := edited.patched(c.RejectPatch)
	if err != nil {
		return v.d.errAt(path, "reject patch on %q: %v", id, err)
	}
	if err := v.decodeManifest(rejected, strings.TrimSuffix(path, fmt.Sprintf(".objects[%d]", len(c.Base)))+".reject"); err != nil {
		return err
	}
	c.Base = append(c.Base, m)
	c.Applied = append(c.Applied, st.applied[id])
	return nil
}

// Describe: the pace and what is churned.
func (c *Churn) Describe(*Step) string {
	late := ""
	if len(c.LateVMs) > 0 {
		late = ", late VMs " + strings.Join(c.LateVMs, ", ") + " started and stopped"
	}
	return fmt.Sprintf("%s, one operation per %s: VMs %s label %s in %v%s, NetworkQoS %s", c.Duration, c.Interval,
		strings.Join(c.VMs, ", "), c.Label, c.Values, late, strings.Join(c.Objects, ", "))
}

// ChurnEdit is the merge patch of a churn edit: a new priority and a new
// value of the churn's label in the podSelector.
func ChurnEdit(label, value string, priority int) map[string]any {
	return map[string]any{"spec": map[string]any{"priority": priority,
		"podSelector": map[string]any{"matchLabels": map[string]any{label: value}}}}
}

func countOf(list []string, s string) int {
	n := 0
	for _, x := range list {
		if x == s {
			n++
		}
	}
	return n
}
