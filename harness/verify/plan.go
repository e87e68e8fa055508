package verify

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/nqos/nqos/harness/world"
	"github.com/nqos/nqos/internal/intent"
	"github.com/nqos/nqos/internal/qos"
	"github.com/nqos/nqos/scenarios"
	"github.com/nqos/nqos/scenarios/manifests"
)

// Plan is one verify run: the scenario it runs and what it expects.
type Plan struct {
	Scenario *scenarios.Scenario
	Probes   []Probe
	Shadowed []Shadowed
	OVN      string
	// NotProbed say which classes the testbed cannot probe and why.
	NotProbed []string
}

// Probe is one class with the flows that probe it and its intent.
type Probe struct {
	Class
	Flow     string // the raw probe flow
	Overload string // the overload flow of a metered class ("" otherwise)
	Intent   Intent
	// Sharing is the meter's sharing on the VM's node (metered classes).
	Sharing *intent.Share
}

// Build plans the verification of a decoded manifest set; file names the
// set in messages. The classes, their intent and the shadowed rules are
// the compiler-only fabric view's (internal/intent). Errors about the
// set are *InputError.
func Build(objs []*manifests.Object, file string, opts Options) (*Plan, error) {
	if opts.Nodes == 0 {
		opts.Nodes = 2
	}
	d := baseDocument(sources(objs), opts)
	base, err := d.parse(file)
	if err != nil {
		return nil, err
	}
	c, err := world.Compile(base)
	if err != nil {
		return nil, &InputError{Err: err}
	}
	view, err := explainSet(objs, opts)
	if err != nil {
		return nil, err
	}
	p := &Plan{OVN: opts.OVN, Shadowed: view.Shadowed}
	for _, pr := range view.Probes {
		if why := unprobed(base, pr.Class); why != "" {
			p.NotProbed = append(p.NotProbed, fmt.Sprintf("%s %s %s %s/%d: %s", pr.VM, pr.Family, pr.Dst, pr.Protocol, pr.Port, why))
			continue
		}
		p.Probes = append(p.Probes, Probe{Class: pr.Class, Intent: pr.Intent, Sharing: pr.Sharing})
	}
	if len(p.Probes) == 0 {
		return nil, &InputError{Err: fmt.Errorf("%s: no running VM with an address in %v to probe", file, opts.Families)}
	}
	d.addProbes(base, c, p)
	if p.Scenario, err = d.parse(file); err != nil {
		return nil, err
	}
	return p, nil
}

// explainSet is the fabric view of the set on the testbed's nodes.
func explainSet(objs []*manifests.Object, opts Options) (*intent.View, error) {
	set, err := manifests.Decode(objs)
	if err != nil {
		return nil, &InputError{Err: err}
	}
	nodes := make([]string, opts.Nodes)
	for i := range nodes {
		nodes[i] = manifests.NodeHostname(i + 1)
	}
	cl, err := intent.FromSet(set, nodes)
	if err != nil {
		return nil, &InputError{Err: err}
	}
	view, err := intent.Explain(cl, intent.Options{OVN: opts.OVN, Families: opts.Families})
	if err != nil {
		return nil, &InputError{Err: err}
	}
	return view, nil
}

// addProbes adds the destination hosts, one raw probe flow per class,
// a raw overload flow per metered class (no congestion control, whatever
// the protocol: a TCP-only rule is overloaded with raw TCP segments), the wait for the compiled rows and
// the steps that send them.
func (d *document) addProbes(sc *scenarios.Scenario, c *world.Compiled, p *Plan) {
	hosts := newHostSet(sc)
	var probes []string
	for i := range p.Probes {
		pr := &p.Probes[i]
		vm := vmByRef(sc, pr.VM)
		host := destination(hosts, vm, sc, pr.Class)
		pr.Flow = fmt.Sprintf("p%03d", i+1)
		probes = append(probes, pr.Flow)
		d.Flows = append(d.Flows, map[string]any{"name": pr.Flow, "from": vm.Name, "to": host, "protocol": pr.Protocol,
			"port": pr.Port, "tool": scenarios.ToolPackets, "rate": probeRate, "duration": probeDuration,
			"ipFamilies": []Family{pr.Family}, "expect": []map[string]any{markExpect(pr.Intent)}})
	}
	d.Topology.Hosts = hosts.list()
	if w := waitCheck(sc, c); w != nil {
		d.Steps = append(d.Steps, map[string]any{"name": "the controller's rows are the compiled rows", "wait": w})
	}
	d.Steps = append(d.Steps, map[string]any{"start": probes}, map[string]any{"stop": probes})
	for i := range p.Probes {
		pr := &p.Probes[i]
		if pr.Intent.MeterKbps == nil {
			continue
		}
		vm := vmByRef(sc, pr.VM)
		pr.Overload = fmt.Sprintf("o%03d", i+1)
		e := markExpect(pr.Intent)
		id, rule := d.meterSource(pr.Intent.MeterRule)
		e["policedBy"] = map[string]any{"manifest": id, "rule": rule}
		d.Flows = append(d.Flows, map[string]any{"name": pr.Overload, "from": vm.Name, "to": destination(hosts, vm, sc, pr.Class),
			"protocol": pr.Protocol, "port": pr.Port, "tool": scenarios.ToolPackets, "payload": overloadPayload,
			"rate":     strconv.FormatFloat(float64(*pr.Intent.MeterKbps)*overloadFactor, 'f', 0, 64) + "k",
			"duration": overloadDuration, "ipFamilies": []Family{pr.Family}, "expect": []map[string]any{e}})
		d.Steps = append(d.Steps, map[string]any{"start": []string{pr.Overload}}, map[string]any{"stop": []string{pr.Overload}})
	}
}

// unprobed says why the testbed cannot probe a class ("" when it can):
// a selected VM on the sender's own node is reached without the uplink
// the capture watches.
func unprobed(sc *scenarios.Scenario, cl Class) string {
	if cl.DstVM == "" {
		return ""
	}
	from, to := vmByRef(sc, cl.VM), vmByRef(sc, cl.DstVM)
	if from != nil && to != nil && from.Node == to.Node {
		return "destination VM " + cl.DstVM + " on the same node: its packets never reach the uplink the capture watches"
	}
	return ""
}

// destination is the flow target of a class: the selected VM itself, or
// the external host holding the destination address.
func destination(hosts *hostSet, vm *scenarios.VM, sc *scenarios.Scenario, cl Class) string {
	if to := vmByRef(sc, cl.DstVM); cl.DstVM != "" && to != nil {
		return to.Name
	}
	return hosts.host(vm, cl.Dst)
}

func markExpect(in Intent) map[string]any {
	if in.DSCP == nil {
		return map[string]any{"unmarked": true}
	}
	return map[string]any{"dscp": *in.DSCP}
}

// meterSource is the manifest id and rule index of a rule reference.
func (d *document) meterSource(ref string) (string, int) {
	obj, idx, _ := strings.Cut(ref, "#")
	ns, name, _ := strings.Cut(obj, "/")
	i, _ := strconv.Atoi(idx)
	for id, s := range d.ids {
		if s.obj.Kind == "NetworkQoS" && s.obj.Name == name && namespaceOr(s.obj.Namespace) == ns {
			return id, i
		}
	}
	return "", i
}

func namespaceOr(ns string) string {
	if ns == "" {
		return "default"
	}
	return ns
}

func vmByRef(sc *scenarios.Scenario, ref string) *scenarios.VM {
	_, name, _ := strings.Cut(ref, "/")
	return sc.VM(name)
}

// waitCheck waits for every NetworkQoS object's compiled condition and
// its compiled QoS rows and port-group members (nil without objects).
func waitCheck(sc *scenarios.Scenario, c *world.Compiled) map[string]any {
	var objs []map[string]any
	for _, m := range sc.Manifests {
		if m.Revision != 0 || m.QoS == nil {
			continue
		}
		owner := intent.ObjectKey(m.QoS)
		oc := map[string]any{"manifest": m.ID}
		if cond, ok := accepted(c.Desired, m.QoS.Namespace, m.QoS.Name); ok {
			oc["condition"] = map[string]any{"status": cond.Status, "reason": cond.Reason}
		}
		oc["rows"] = rowsCheck(sc, c, owner)
		objs = append(objs, oc)
	}
	if len(objs) == 0 {
		return nil
	}
	return map[string]any{"timeout": waitTimeout, "objects": objs}
}

func accepted(d qos.Desired, ns, name string) (qos.Condition, bool) {
	for _, st := range d.NetworkQoS {
		if st.Namespace == namespaceOr(ns) && st.Name == name {
			for _, c := range st.Conditions {
				if c.Type == "Accepted" {
					return c, true
				}
			}
		}
	}
	return qos.Condition{}, false
}

// rowsCheck is the exact set of compiled QoS rows of owner, with its
// port group written @$pg, and the VMs in its port groups.
func rowsCheck(sc *scenarios.Scenario, c *world.Compiled, owner string) map[string]any {
	var qosRows []map[string]any
	pgs := map[string]bool{}
	var members []string
	for _, pg := range c.Desired.PortGroups {
		if pg.ExternalIDs[qos.ObjectNameKey] != owner {
			continue
		}
		pgs[pg.Name] = true
		for _, v := range sc.Topology.VMs {
			if slices.Contains(pg.Ports, c.Port(v.Name)) && !slices.Contains(members, v.Name) {
				members = append(members, v.Name)
			}
		}
	}
	for _, r := range c.Desired.QoS {
		if r.ExternalIDs[qos.ObjectNameKey] != owner {
			continue
		}
		match := r.Match
		for pg := range pgs {
			match = strings.ReplaceAll(match, "@"+pg, "@$pg")
		}
		i, _ := strconv.Atoi(r.ExternalIDs[qos.RuleIndexKey])
		qosRows = append(qosRows, map[string]any{"rule": i, "network": r.ExternalIDs[qos.NetworkKey], "match": match})
	}
	if len(qosRows) == 0 {
		return map[string]any{"none": true}
	}
	slices.Sort(members)
	return map[string]any{"qos": qosRows, "portGroupMembers": members}
}
