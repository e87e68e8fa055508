package scenarios

import (
	"fmt"
	"slices"
)

// Spoof frames: SpoofPPS frames per second of SpoofPayload UDP bytes
// (the spoofing operation's defaults in package harness/localnetenv), so each spoofed flow offers
// SpoofOfferedBits bit/s (whole untagged Ethernet frames) for one second.
const (
	SpoofPPS         = 3000
	SpoofPayload     = 1000
	SpoofOfferedBits = SpoofPPS * 8 * (14 + 20 + 8 + SpoofPayload)
)

// DefaultBaselineN is an ovnBaseline step's samples by default.
const DefaultBaselineN = 3

// AdversarialSteps are the step kinds of adversarial tests.
type AdversarialSteps struct {
	Spoof       *Spoof       `yaml:"spoof"`
	Churn       *Churn       `yaml:"churn"`
	OVNBaseline *OVNBaseline `yaml:"ovnBaseline"`
}

// Spoof (scenario 12-spoofing): the guest of VM sends raw IPv4 frames to
// Peer with its own addresses, with As's source IP, and with As's source
// IP and MAC; As sends a few of its own frames as a control. The match is
// the ingress port, so frames with the forged IP keep the spoofer's class
// (Class: its DSCP, and its meter's token-bucket bound and floor); frames
// with the forged MAC are dropped by port security.
type Spoof struct {
	VM      string   `yaml:"vm,required"`      // the spoofer
	As      string   `yaml:"as,required"`      // the VM whose IP and MAC it forges
	Peer    string   `yaml:"peer,required"`    // external host the frames go to
	Class   ClassRef `yaml:"class,required"`   // the spoofer's own class (must police)
	AsClass ClassRef `yaml:"asClass,required"` // the forged VM's class

	// Resolved from the manifest revisions in force at the step.
	DSCP, AsDSCP        int    `yaml:"-"`
	RateKbps, BurstKbit uint32 `yaml:"-"`
}

// ClassRef names one egress rule of a NetworkQoS manifest.
type ClassRef struct {
	Manifest string `yaml:"manifest,required"`
	Rule     int    `yaml:"rule"`
}

// OVNBaseline measures OVN's own port-group change time in the same run:
// the harness puts the bound, running port of VM into a port group of its
// own with a QoS row of its own (DSCP, foreign to the controller, which
// must leave both alone) and times `ovn-nbctl pg-set-ports` to the first
// packet of VM's probe to Peer with that DSCP on the uplink, Samples
// times. A later startVM probe is judged against it.
type OVNBaseline struct {
	VM      string `yaml:"vm,required"`
	Peer    string `yaml:"peer,required"`
	DSCP    int    `yaml:"dscp,required"`
	Samples int    `yaml:"samples"` // default 3
}

func (sp *Spoof) validate(v *validator, at stepAt) error {
	path, st := at.path, at.st
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

// Describe: the spoofer, the forged VM, the peer and both classes.
func (sp *Spoof) Describe(*Step) string {
	return fmt.Sprintf("VM %s forges VM %s's IP and MAC towards %s (own class DSCP %d, %d kbit/s; forged class DSCP %d)",
		sp.VM, sp.As, sp.Peer, sp.DSCP, sp.RateKbps, sp.AsDSCP)
}

func (b *OVNBaseline) validate(v *validator, at stepAt) error {
	path, st := at.path, at.st
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

// Describe: the VM, the DSCP, the samples and the peer.
func (b *OVNBaseline) Describe(*Step) string {
	return fmt.Sprintf("VM %s's port into a harness-owned port group (DSCP %d) and out, %d times, probe to %s", b.VM, b.DSCP, b.Samples, b.Peer)
}
