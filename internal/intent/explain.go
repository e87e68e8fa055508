package intent

import (
	"cmp"
	"fmt"
	"net/netip"
	"slices"

	"github.com/nqos/nqos/internal/qos"
)

// Intent is the compiled intent of a class on one OVN version.
type Intent struct {
	DSCP      *int    `json:"dscp"`
	MeterKbps *uint32 `json:"meterKbps"`
	Rule      *string `json:"rule"`
	// MeterRule is the rule whose meter applies (another rule than Rule
	// on OVN before 24.09).
	MeterRule string `json:"-"`
	BurstKbit uint32 `json:"-"`
}

// IntentOf is the intent the winning rows give.
func IntentOf(w Winners) Intent {
	var in Intent
	if w.Mark != nil {
		d, ref := w.Mark.Action.DSCP, RowRef(w.Mark)
		in.DSCP, in.Rule = &d, &ref
	}
	if w.Meter != nil && w.Meter.Bandwidth != nil {
		r := w.Meter.Bandwidth.Rate
		in.MeterKbps, in.MeterRule, in.BurstKbit = &r, RowRef(w.Meter), w.Meter.Bandwidth.Burst
		if in.Rule == nil {
			in.Rule = &in.MeterRule
		}
	}
	return in
}

// Options shape a derivation.
type Options struct {
	OVN      string   // the OVN release the intent is for, e.g. "23.03" or "25.03.0"
	Families []Family // the families derived
}

// Probe is one class of a VM with its compiled intent and, when
// metered, who shares the meter.
type Probe struct {
	Class
	Intent  Intent
	Sharing *Share
}

// View is the compiler-only fabric view of a cluster on one OVN version.
type View struct {
	OVN      string
	Probes   []Probe // sorted by VM, family, destination, protocol, port
	Shadowed []Shadowed
	Meters   []Share // every meter on every node, sorted
	Rejected []Rejected
	Warnings []string // the compiler's
	Notes    []string // VMs left out
	Desired  qos.Desired
	eval     *classEval
}

// classEval gives the intent of any class of a VM of the view.
type classEval struct {
	ix    *Index
	vms   map[string]VM
	split bool
}

// IntentFor is the intent of a class of VM cl.VM as this view compiles
// it, sent from the VM's own address of the class's family; false when
// the view has no such VM or address.
func (v *View) IntentFor(cl Class) (Intent, bool, error) {
	vm, ok := v.eval.vms[cl.VM]
	if !ok {
		return Intent{}, false, nil
	}
	src := netip.Addr{}
	for _, a := range vm.Addrs {
		if familyOf(a.Addr()) == cl.Family {
			src = a.Addr()
		}
	}
	if !src.IsValid() && !vm.Unknown {
		return Intent{}, false, nil
	}
	w, err := v.eval.ix.Winners(vm.Switch, Packet{InPort: vm.Port, Src: src, Dst: cl.Dst, Protocol: cl.Protocol, DstPort: cl.Port}, v.eval.split)
	if err != nil {
		return Intent{}, false, fmt.Errorf("VM %s: %w", vm.Ref, err)
	}
	return IntentOf(w), true, nil
}

// Rejected is a NetworkQoS object the compiler does not accept.
type Rejected struct {
	Object  string `json:"object"` // "ns/name"
	Reason  string `json:"reason"`
	Message string `json:"message"`
}

// Explain compiles c and derives every VM's classes and their intent.
func Explain(c *Cluster, opts Options) (*View, error) {
	split, err := SplitStages(opts.OVN)
	if err != nil {
		return nil, err
	}
	v := &View{OVN: opts.OVN, Desired: qos.Compile(c.Input), Notes: c.Notes}
	v.Warnings, v.Rejected = v.Desired.Warnings, rejected(v.Desired)
	rows, ix := newRulesIndex(c, &v.Desired), NewIndex(&v.Desired)
	v.eval = &classEval{ix: ix, vms: make(map[string]VM, len(c.VMs)), split: split}
	for _, vm := range c.VMs {
		v.eval.vms[vm.Ref] = vm
	}
	v.Meters = Meters(c, &v.Desired)
	shares := map[[3]string]*Share{} // rule, node, and the VM of a per-VM meter
	for i := range v.Meters {
		m := &v.Meters[i]
		vm := ""
		if m.PerVM {
			vm = m.VMs[0]
		}
		shares[[3]string{m.Rule, m.Node, vm}] = m
	}
	d := NewDeriver(c.Taken())
	for _, vm := range c.VMs {
		rules, err := rows.selecting(vm)
		if err != nil {
			return nil, fmt.Errorf("VM %s: %w", vm.Ref, err)
		}
		v.Shadowed = append(v.Shadowed, Shadows(vm.Ref, rules, split)...)
		classes, err := d.Classes(vm, rules, opts.Families)
		if err != nil {
			return nil, err
		}
		for _, cl := range classes {
			w, err := ix.Winners(vm.Switch, Packet{InPort: vm.Port, Src: cl.Src, Dst: cl.Dst, Protocol: cl.Protocol, DstPort: cl.Port}, split)
			if err != nil {
				return nil, fmt.Errorf("VM %s: %w", vm.Ref, err)
			}
			p := Probe{Class: cl, Intent: IntentOf(w)}
			if p.Intent.MeterKbps != nil {
				p.Sharing = shares[[3]string{p.Intent.MeterRule, vm.Node, vm.Ref}]
				if p.Sharing == nil {
					p.Sharing = shares[[3]string{p.Intent.MeterRule, vm.Node, ""}]
				}
			}
			v.Probes = append(v.Probes, p)
		}
	}
	slices.SortFunc(v.Probes, func(a, b Probe) int { return compareClass(a.Class, b.Class) })
	slices.SortFunc(v.Shadowed, func(a, b Shadowed) int { return cmp.Or(cmp.Compare(a.VM, b.VM), cmp.Compare(a.Rule, b.Rule)) })
	return v, nil
}

// rejected are the objects whose Accepted condition is False.
func rejected(d qos.Desired) []Rejected {
	var out []Rejected
	for _, st := range d.NetworkQoS {
		for _, c := range st.Conditions {
			if c.Type == "Accepted" && c.Status == "False" {
				out = append(out, Rejected{Object: st.Namespace + "/" + st.Name, Reason: c.Reason, Message: c.Message})
			}
		}
	}
	return out
}
