package intent

import (
	"fmt"
	"net/netip"
	"slices"
	"strconv"
	"strings"

	"github.com/nqos/nqos/api/v1alpha1"
	"github.com/nqos/nqos/internal/qos"
)

// RuleRef names rule i of an object as the reports do: "ns/name#i".
func RuleRef(namespace, name string, i int) string {
	return namespace + "/" + name + "#" + strconv.Itoa(i)
}

// RowRef is the RuleRef of a compiled QoS row ("" for nil).
func RowRef(r *qos.QoSRow) string {
	if r == nil {
		return ""
	}
	ns, name, _ := strings.Cut(r.ExternalIDs[qos.ObjectNameKey], ":")
	i, _ := strconv.Atoi(r.ExternalIDs[qos.RuleIndexKey])
	return RuleRef(ns, name, i)
}

// ObjectKey is the compiled rows' owner name of an object, "ns:name".
func ObjectKey(nq *v1alpha1.NetworkQoS) string { return namespaceOf(nq) + ":" + nq.Name }

func namespaceOf(nq *v1alpha1.NetworkQoS) string {
	if nq.Namespace == "" {
		return "default"
	}
	return nq.Namespace
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
			return out, fmt.Errorf("NetworkQoS %s/%s: spec.egress[%d].classifier.to[%d].ipBlock: %w", namespaceOf(nq), nq.Name, i, j, err)
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

// rowKey finds a compiled row by switch, owner and rule index.
type rowKey struct {
	sw, owner string
	rule      int
}

// rulesIndex resolves the rules selecting a port from the compiled
// state: port groups by member, rows by switch/owner/rule.
type rulesIndex struct {
	objects map[string]*v1alpha1.NetworkQoS // owner -> object
	owners  map[string][]string             // port -> owners of port groups holding it
	rows    map[rowKey]*qos.QoSRow
	sets    map[string][]string   // address set -> addresses
	vmOf    map[netip.Addr]string // guest address -> VM
}

func newRulesIndex(c *Cluster, d *qos.Desired) *rulesIndex {
	in := &c.Input
	ix := &rulesIndex{objects: map[string]*v1alpha1.NetworkQoS{}, owners: map[string][]string{}, rows: map[rowKey]*qos.QoSRow{},
		sets: make(map[string][]string, len(d.AddressSets)), vmOf: map[netip.Addr]string{}}
	for _, as := range d.AddressSets {
		ix.sets[as.Name] = as.Addresses
	}
	for _, vm := range c.VMs {
		for _, a := range vm.Addrs {
			ix.vmOf[a.Addr()] = vm.Ref
		}
	}
	for _, nq := range in.NetworkQoSes {
		ix.objects[ObjectKey(nq)] = nq
	}
	for _, pg := range d.PortGroups {
		owner := pg.ExternalIDs[qos.ObjectNameKey]
		for _, p := range pg.Ports {
			ix.owners[p] = append(ix.owners[p], owner)
		}
	}
	for i := range d.QoS {
		r := &d.QoS[i]
		n, _ := strconv.Atoi(r.ExternalIDs[qos.RuleIndexKey])
		ix.rows[rowKey{r.Switch, r.ExternalIDs[qos.ObjectNameKey], n}] = r
	}
	return ix
}

// selecting returns the rules of the NetworkQoS objects whose compiled
// port group on vm's switch holds vm's port, with each rule's OVN
// priority, DSCP and meter from its compiled QoS row.
func (ix *rulesIndex) selecting(vm VM) ([]Rule, error) {
	var out []Rule
	seen := map[string]bool{}
	for _, owner := range ix.owners[vm.Port] {
		nq := ix.objects[owner]
		if seen[owner] || nq == nil {
			continue
		}
		seen[owner] = true
		for i, r := range nq.Spec.Egress {
			rule, err := ruleOf(nq, i, r)
			if err != nil {
				return nil, err
			}
			row := ix.rows[rowKey{vm.Switch, owner, i}]
			if row == nil {
				return nil, fmt.Errorf("NetworkQoS %s rule %d: no compiled QoS row on switch %s", owner, i, vm.Switch)
			}
			rule.Priority, rule.DSCP = row.Priority, row.Action.DSCP
			if row.Bandwidth != nil {
				rule.RateKbps = row.Bandwidth.Rate
			}
			if rule.Selectors {
				if rule.Selected, err = ix.selected(row); err != nil {
					return nil, fmt.Errorf("NetworkQoS %s rule %d: %w", owner, i, err)
				}
			}
			out = append(out, rule)
		}
	}
	return out, nil
}

// selected are the addresses of the address sets row's match names, in
// the order the sets list them, each with the VM holding it.
func (ix *rulesIndex) selected(row *qos.QoSRow) ([]Selected, error) {
	var out []Selected
	for _, name := range addressSetRefs(row.Match) {
		addrs, ok := ix.sets[name]
		if !ok {
			return nil, fmt.Errorf("match of the row on %s names address set %s, which the compiler did not make", row.Switch, name)
		}
		for _, s := range addrs {
			a, err := netip.ParseAddr(s)
			if err != nil {
				return nil, fmt.Errorf("address set %s: %w", name, err)
			}
			out = append(out, Selected{Addr: a, VM: ix.vmOf[a]})
		}
	}
	return out, nil
}

// addressSetRefs are the names of the $address_set references of a match.
func addressSetRefs(match string) []string {
	var out []string
	for _, f := range strings.FieldsFunc(match, func(r rune) bool {
		return r == ' ' || r == '{' || r == '}' || r == ',' || r == '(' || r == ')' || r == '='
	}) {
		if name, ok := strings.CutPrefix(f, "$"); ok && name != "" && !slices.Contains(out, name) {
			out = append(out, name)
		}
	}
	return out
}
