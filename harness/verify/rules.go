package verify

import (
	"fmt"
	"maps"
	"net/netip"
	"slices"
	"strconv"
	"strings"

	"github.com/nqos/nqos/api/v1alpha1"
	"github.com/nqos/nqos/harness"
	"github.com/nqos/nqos/internal/qos"
	"github.com/nqos/nqos/scenarios"
)

// selecting returns the rules of the NetworkQoS objects whose compiled
// port group on vm's switch holds vm's port, with each rule's OVN
// priority, DSCP and meter from its compiled QoS row.
func selecting(sc *scenarios.Scenario, c *harness.Compiled, vm string) ([]Rule, error) {
	sw, port := c.Switch(vm), c.Port(vm)
	owners := map[string]bool{}
	for _, pg := range c.Desired.PortGroups {
		if slices.Contains(pg.Ports, port) {
			owners[pg.ExternalIDs[qos.ObjectNameKey]] = true
		}
	}
	var out []Rule
	for _, m := range sc.Manifests {
		if m.Revision != 0 || m.QoS == nil || !owners[objectKey(m.QoS)] {
			continue
		}
		for i, r := range m.QoS.Spec.Egress {
			rule, err := ruleOf(m.QoS, i, r)
			if err != nil {
				return nil, fmt.Errorf("%s: %s: %w", sc.File, m.Key(), err)
			}
			row := qosRow(c.Desired, sw, objectKey(m.QoS), i)
			if row == nil {
				return nil, fmt.Errorf("%s: %s rule %d: no compiled QoS row on switch %s", sc.File, m.Key(), i, sw)
			}
			rule.Priority, rule.DSCP = row.Priority, row.Action.DSCP
			if row.Bandwidth != nil {
				rule.RateKbps = row.Bandwidth.Rate
			}
			out = append(out, rule)
		}
	}
	return out, nil
}

// objectKey is the compiled rows' owner name of an object, "ns:name".
func objectKey(nq *v1alpha1.NetworkQoS) string { return namespaceOf(nq) + ":" + nq.Name }

func namespaceOf(nq *v1alpha1.NetworkQoS) string {
	if nq.Namespace == "" {
		return "default"
	}
	return nq.Namespace
}

// RuleRef names rule i of an object as the report does: "ns/name#i".
func RuleRef(namespace, name string, i int) string {
	return namespace + "/" + name + "#" + strconv.Itoa(i)
}

// rowRef is the RuleRef of a compiled QoS row ("" for nil).
func rowRef(r *qos.QoSRow) string {
	if r == nil {
		return ""
	}
	ns, name, _ := strings.Cut(r.ExternalIDs[qos.ObjectNameKey], ":")
	i, _ := strconv.Atoi(r.ExternalIDs[qos.RuleIndexKey])
	return RuleRef(ns, name, i)
}

func qosRow(d qos.Desired, sw, owner string, rule int) *qos.QoSRow {
	for i := range d.QoS {
		r := &d.QoS[i]
		if r.Switch == sw && r.ExternalIDs[qos.ObjectNameKey] == owner && r.ExternalIDs[qos.RuleIndexKey] == strconv.Itoa(rule) {
			return r
		}
	}
	return nil
}

// ruleOf is the classifier of rule i as the derivation sees it.
func ruleOf(nq *v1alpha1.NetworkQoS, i int, r v1alpha1.Rule) (Rule, error) {
	out := Rule{Ref: RuleRef(namespaceOf(nq), nq.Name, i)}
	if r.Classifier == nil {
		return out, nil
	}
	for j, d := range r.Classifier.To {
		if d.IPBlock == nil {
			out.Selectors = true
			continue
		}
		b, err := blockOf(*d.IPBlock)
		if err != nil {
			return out, fmt.Errorf("spec.egress[%d].classifier.to[%d].ipBlock: %w", i, j, err)
		}
		out.Blocks = append(out.Blocks, b)
	}
	for _, p := range r.Classifier.Ports {
		if p == nil {
			continue
		}
		q := Port{Protocol: strings.ToLower(p.Protocol)}
		if p.Port != nil {
			q.Port = int(*p.Port)
		}
		out.Ports = append(out.Ports, q)
	}
	return out, nil
}

func blockOf(b v1alpha1.IPBlock) (Block, error) {
	cidr, err := netip.ParsePrefix(b.CIDR)
	if err != nil {
		return Block{}, fmt.Errorf("cidr: %w", err)
	}
	out := Block{CIDR: cidr.Masked()}
	for k, e := range b.Except {
		p, err := netip.ParsePrefix(e)
		if err != nil {
			return Block{}, fmt.Errorf("except[%d]: %w", k, err)
		}
		out.Except = append(out.Except, p.Masked())
	}
	return out, nil
}

// vmOf is the derivation's view of a scenario VM.
func vmOf(v *scenarios.VM) (VM, error) {
	out := VM{Ref: v.Namespace + "/" + v.Name}
	for _, a := range []string{v.Addresses.V4, v.Addresses.V6} {
		if a == "" {
			continue
		}
		p, err := netip.ParsePrefix(a)
		if err != nil {
			return out, fmt.Errorf("VM %s: address %q: %w", out.Ref, a, err)
		}
		out.Addrs = append(out.Addrs, p)
	}
	return out, nil
}

// takenAddrs are the guest addresses of every VM of sc.
func takenAddrs(sc *scenarios.Scenario) []netip.Addr {
	seen := map[netip.Addr]bool{}
	for _, v := range sc.Topology.VMs {
		for _, a := range []string{v.Addresses.V4, v.Addresses.V6} {
			if p, err := netip.ParsePrefix(a); err == nil {
				seen[p.Addr()] = true
			}
		}
	}
	return slices.SortedFunc(maps.Keys(seen), netip.Addr.Compare)
}
