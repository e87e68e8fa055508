package scenarios

import (
	"fmt"
	"regexp"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"
)

// Patched returns the next revision of m: m with an RFC 7386 merge patch
// (the harness's churn makes its revisions with it).
func (m *Manifest) Patched(patch map[string]any) (*Manifest, error) { return m.patched(patch) }

// ChurnEdit is the merge patch of a churn edit: a new priority and a new
// value of the churn's label in the podSelector.
func ChurnEdit(label, value string, priority int) map[string]any {
	return map[string]any{"spec": map[string]any{"priority": priority,
		"podSelector": map[string]any{"matchLabels": map[string]any{label: value}}}}
}

// adversarial checks a spoof, churn or ovnBaseline step.
func (sp *Spoof) validate(v *validator, at stepAt) error { return v.spoof(sp, at.path, at.st) }

func (c *Churn) validate(v *validator, at stepAt) error { return v.churn(c, at.path, at.st) }

func (b *OVNBaseline) validate(v *validator, at stepAt) error {
	return v.ovnBaseline(b, at.path, at.st)
}

// Describe: the spoofer, the forged VM, the peer and both classes.
func (sp *Spoof) Describe(*Step) string {
	return fmt.Sprintf("VM %s forges VM %s's IP and MAC towards %s (own class DSCP %d, %d kbit/s; forged class DSCP %d)",
		sp.VM, sp.As, sp.Peer, sp.DSCP, sp.RateKbps, sp.AsDSCP)
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

// Describe: the VM, the DSCP, the samples and the peer.
func (b *OVNBaseline) Describe(*Step) string {
	return fmt.Sprintf("VM %s's port into a harness-owned port group (DSCP %d) and out, %d times, probe to %s", b.VM, b.DSCP, b.Samples, b.Peer)
}

// v4VM checks that a VM exists at the step and sends from its topology
// IPv4 address (the raw frames and probes of these steps are IPv4).
func (v *validator) v4VM(name, path string, st *stepState) error {
	if err := v.runningVM(name, path, st); err != nil {
		return err
	}
	switch {
	case st.readdr[name]:
		return v.d.errAt(path, "VM %q changed its guest address in a guestIP step (this step uses the topology address)", name)
	case v.vms[name].Addresses.V4 == "":
		return v.d.errAt(path, "VM %q has no IPv4 address (this step sends IPv4)", name)
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

func (v *validator) spoof(sp *Spoof, path string, st *stepState) error {
	for _, f := range []struct{ name, field string }{{sp.VM, ".vm"}, {sp.As, ".as"}} {
		if err := v.v4VM(f.name, path+f.field, st); err != nil {
			return err
		}
	}
	net := v.vms[sp.VM].Network
	switch {
	case sp.VM == sp.As:
		return v.d.errAt(path+".as", "a VM cannot spoof itself")
	case v.vms[sp.As].Network != net:
		return v.d.errAt(path+".as", "VM %q is on network %q, the spoofer %q on %q", sp.As, v.vms[sp.As].Network, sp.VM, net)
	case !slices.Contains(v.sc.Families, V4):
		return v.d.errAt(path, "the spoofed frames are IPv4; add v4 to ipFamilies")
	}
	if err := v.v4Peer(sp.Peer, net, path+".peer"); err != nil {
		return err
	}
	own, err := v.classRule(sp.Class, path+".class", st)
	if err != nil {
		return err
	}
	as, err := v.classRule(sp.AsClass, path+".asClass", st)
	if err != nil {
		return err
	}
	sp.DSCP, sp.AsDSCP = own.DSCP, as.DSCP
	switch {
	case sp.DSCP == sp.AsDSCP:
		return v.d.errAt(path+".asClass", "both classes mark DSCP %d: the capture could not tell them apart", sp.DSCP)
	case own.Bandwidth == nil:
		return v.d.errAt(path+".class.rule", "rule %d of %q has no bandwidth: the spoofer's own meter cannot be judged", sp.Class.Rule, sp.Class.Manifest)
	case uint64(own.Bandwidth.Rate)*1000*2 > SpoofOfferedBits:
		return v.d.errAt(path+".class.rule", "rate %d kbit/s is above half the offered %d bit/s: the meter would not be overloaded", own.Bandwidth.Rate, SpoofOfferedBits)
	}
	sp.RateKbps, sp.BurstKbit = own.Bandwidth.Rate, own.Bandwidth.Burst
	return nil
}

// classRule resolves an applied NetworkQoS manifest's egress rule.
func (v *validator) classRule(c ClassRef, path string, st *stepState) (ruleView, error) {
	m, ok := st.current[c.Manifest]
	switch {
	case !ok || m.QoS == nil:
		return ruleView{}, v.d.errAt(path+".manifest", "unknown NetworkQoS manifest %q", c.Manifest)
	case !st.applied[c.Manifest]:
		return ruleView{}, v.d.errAt(path+".manifest", "NetworkQoS manifest %q is not applied at this step", c.Manifest)
	case c.Rule < 0 || c.Rule >= len(m.QoS.Spec.Egress):
		return ruleView{}, v.d.errAt(path+".rule", "%s (revision %d) has egress rules 0..%d, not %d", m.Key(), m.Revision, len(m.QoS.Spec.Egress)-1, c.Rule)
	}
	r := m.QoS.Spec.Egress[c.Rule]
	out := ruleView{DSCP: r.DSCP}
	if r.Bandwidth != nil {
		out.Bandwidth = &bandwidth{Rate: r.Bandwidth.Rate, Burst: r.Bandwidth.Burst}
	}
	return out, nil
}

type ruleView struct {
	DSCP      int
	Bandwidth *bandwidth
}

type bandwidth struct{ Rate, Burst uint32 }

var labelKeyRE = regexp.MustCompile(`^([a-z0-9.-]+/)?[A-Za-z0-9]([A-Za-z0-9_.-]*[A-Za-z0-9])?$`)

func (v *validator) churn(c *Churn, path string, st *stepState) error {
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
		if err := v.eachName(c.LateVMs, path+".lateVMs", "VM", func(name, p string) error { return v.churnLateVM(c, name, p, st) }); err != nil {
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
		return v.churnObject(c, id, p, st)
	})
}

// churnLateVM checks a VM the churn starts and stops: a late VM not
// started at the step (the churn leaves it stopped again), listed once.
func (v *validator) churnLateVM(c *Churn, name, path string, st *stepState) error {
	vm, ok := v.vms[name]
	switch {
	case !ok:
		return v.d.errAt(path, "unknown VM %q", name)
	case !vm.Late:
		return v.d.errAt(path, "VM %q is created at provisioning: the churn starts and stops late VMs only (set late: true in topology.vms)", name)
	case st.running[name]:
		return v.d.errAt(path, "VM %q is already started at this step: the churn starts and stops late VMs that are not running", name)
	case countOf(c.LateVMs, name) > 1:
		return v.d.errAt(path, "VM %q is listed twice", name)
	}
	return nil
}

// churnObject resolves one churned object and checks that its edited and
// rejected revisions decode and pass the compiler's spec validation.
func (v *validator) churnObject(c *Churn, id, path string, st *stepState) error {
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

func (v *validator) ovnBaseline(b *OVNBaseline, path string, st *stepState) error {
	if err := v.v4VM(b.VM, path+".vm", st); err != nil {
		return err
	}
	if b.Samples == 0 {
		b.Samples = DefaultBaselineN
	}
	switch {
	case b.DSCP < 0 || b.DSCP > 63:
		return v.d.errAt(path+".dscp", "DSCP %d out of range 0..63", b.DSCP)
	case b.Samples < 1 || b.Samples > 10:
		return v.d.errAt(path+".samples", "%d out of range 1..10", b.Samples)
	}
	return v.v4Peer(b.Peer, v.vms[b.VM].Network, path+".peer")
}

// startVMProbe checks a startVM step's probe: every VM sends IPv4 to
// the peer and an ovnBaseline step before measured OVN's own time.
func (v *validator) startVMProbe(s *Step, idx int, path string) error {
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

func countOf(list []string, s string) int {
	n := 0
	for _, x := range list {
		if x == s {
			n++
		}
	}
	return n
}
