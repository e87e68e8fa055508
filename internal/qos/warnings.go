package qos

import (
	"fmt"
	"net/netip"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/nqos/nqos/api/v1alpha1"
)

// WarningKind classifies a compiler warning. The compiler is the one
// home of these signals: the controller (events, conditions), the CLI's
// compile output, explain and verify all read them from a Result.
type WarningKind string

// Warning kinds.
const (
	// WarningNoNetwork: no networkSelectors, or selectors that select no
	// network; the object has no rows.
	WarningNoNetwork WarningKind = "NoNetwork"
	// WarningUnusableNAD: a selected NAD's config cannot be read.
	WarningUnusableNAD WarningKind = "UnusableNAD"
	// WarningNADConflict: NADs of one network disagree on its topology
	// or subnets.
	WarningNADConflict WarningKind = "NADConflict"
	// WarningUnsupportedTopology: a selected network is neither localnet
	// nor layer2; no rows for it.
	WarningUnsupportedTopology WarningKind = "UnsupportedTopology"
	// WarningOutOfScope: a selected network is OVN-Kubernetes's own
	// NetworkQoS's to serve (ScopeIPAMLess); no rows for it.
	WarningOutOfScope WarningKind = "OutOfScope"
	// WarningShadowedRule: a later rule (higher precedence) matches every
	// packet an earlier rule matches, so the earlier one never applies.
	WarningShadowedRule WarningKind = "ShadowedRule"
	// WarningMaskedHostBits: an ipBlock CIDR has host bits set
	// ("10.1.2.3/8"); the compiler uses the masked network ("10.0.0.0/8").
	WarningMaskedHostBits WarningKind = "MaskedHostBits"
	// WarningSharedCap: a rule with a rate selects several VMs on one
	// node; OVN meters a QoS row per switch and chassis, so they share
	// one cap instead of getting one each.
	WarningSharedCap WarningKind = "SharedCap"
)

// Warning is one compiler warning about one object.
type Warning struct {
	Kind WarningKind `json:"kind"`
	// Object is "<namespace>/<name>".
	Object string `json:"object"`
	// Field is the spec field the warning is about, when there is one.
	Field   string `json:"field,omitempty"`
	Message string `json:"message"`
}

// String is "<namespace>/<name>: <message>".
func (w Warning) String() string { return w.Object + ": " + w.Message }

// warn appends a warning about r's object.
func (r *Result) warn(kind WarningKind, field, format string, a ...any) {
	r.Warnings = append(r.Warnings, Warning{Kind: kind, Object: r.Key(), Field: field, Message: fmt.Sprintf(format, a...)})
}

// hostBitWarnings warns about every ipBlock CIDR with host bits set.
// The spec already parsed, so every CIDR is valid.
func hostBitWarnings(nq *v1alpha1.NetworkQoS, r *Result) {
	for i, e := range nq.Spec.Egress {
		if e.Classifier == nil {
			continue
		}
		for j, d := range e.Classifier.To {
			if d.IPBlock == nil {
				continue
			}
			path := fmt.Sprintf("spec.egress[%d].classifier.to[%d].ipBlock", i, j)
			maskedWarning(r, path+".cidr", d.IPBlock.CIDR)
			for k, ex := range d.IPBlock.Except {
				maskedWarning(r, fmt.Sprintf("%s.except[%d]", path, k), ex)
			}
		}
	}
}

func maskedWarning(r *Result, field, cidr string) {
	p, err := netip.ParsePrefix(cidr)
	if err != nil || p.Masked() == p {
		return
	}
	r.warn(WarningMaskedHostBits, field, "%s: %s has host bits set; it is used as %s", field, cidr, p.Masked())
}

// shadowWarnings warns about every rule a later rule shadows: later rules
// get higher OVN priorities, so an earlier rule whose traffic a later
// rule matches entirely never takes effect.
func shadowWarnings(sp *spec, r *Result) {
	for i, early := range sp.rules {
		for _, late := range sp.rules[i+1:] {
			if covers(late, early) {
				r.warn(WarningShadowedRule, fmt.Sprintf("spec.egress[%d]", early.index),
					"spec.egress[%d] never applies: spec.egress[%d] (higher precedence) matches all of its traffic", early.index, late.index)
				break
			}
		}
	}
}

// covers reports whether every packet rule b matches is matched by a.
// It decides from ipBlock and "any" destinations and ports only; a
// selector destination is covered only by "any".
func covers(a, b rule) bool {
	return portsCover(a.ports, b.ports) && destsCover(a.dests, b.dests)
}

func destsCover(a, b []dest) bool {
	if slicesAny(a, func(d dest) bool { return d.any }) {
		return true
	}
	return ListCovers(a, b, func(da, db dest) bool { return db.block != nil && blockCovers(da.block, db.block) })
}

// blockCovers: every address of b (minus its excepts) is in a (minus its
// excepts). Conservative with a's excepts: a must have none inside b.
func blockCovers(a, b *ipBlock) bool {
	if a == nil || a.cidr.Addr().Is4() != b.cidr.Addr().Is4() || a.cidr.Bits() > b.cidr.Bits() || !a.cidr.Contains(b.cidr.Addr()) {
		return false
	}
	for _, ex := range a.except {
		if ex.Overlaps(b.cidr) {
			return false
		}
	}
	return true
}

func portsCover(a, b []protoPorts) bool {
	return ListCovers(a, b, func(pa, pb protoPorts) bool { return pa.proto == pb.proto && portSubset(pb.ports, pa.ports) })
}

// portSubset: the ports of b are among a's ("no ports" is every port).
func portSubset(b, a []int) bool {
	return ListCovers(a, b, func(x, y int) bool { return x == y })
}

// ListCovers decides whether list field a of one rule covers list field
// b of another, as a NetworkQoS rule's destinations and ports read: an
// empty a ("every") covers all; otherwise b must be non-empty and each
// of its elements y covered by one of a's x (by(x, y)).
func ListCovers[T any](a, b []T, by func(x, y T) bool) bool {
	if len(a) == 0 {
		return true
	}
	if len(b) == 0 {
		return false
	}
	for _, y := range b {
		if !slicesAny(a, func(x T) bool { return by(x, y) }) {
			return false
		}
	}
	return true
}

func slicesAny[T any](s []T, f func(T) bool) bool {
	for _, x := range s {
		if f(x) {
			return true
		}
	}
	return false
}

// sharedCapWarnings warns, per rule with a rate, about each node where
// the network's port group holds several of the object's source pods:
// they share the row's one meter on that chassis. A per-port object
// gives each port its own row and meter, so it shares nothing.
func (c *objectCompiler) sharedCapWarnings(n Network, pods []*corev1.Pod, nads map[string]bool) {
	byNode := map[string][]string{}
	for _, p := range pods {
		if len(podPorts(p, nads)) > 0 && p.Spec.NodeName != "" {
			byNode[p.Spec.NodeName] = append(byNode[p.Spec.NodeName], p.Name)
		}
	}
	nodes := make([]string, 0, len(byNode))
	for node, names := range byNode {
		if len(names) > 1 {
			nodes = append(nodes, node)
		}
	}
	sort.Strings(nodes)
	for _, r := range c.sp.rules {
		if r.rate == 0 || c.sp.perPort {
			continue
		}
		for _, node := range nodes {
			names := byNode[node]
			sort.Strings(names)
			c.res.warn(WarningSharedCap, fmt.Sprintf("spec.egress[%d].bandwidth.rate", r.index),
				"spec.egress[%d].bandwidth.rate %d kbps on network %s is one cap shared by the %d pods on node %s (%s), not one each",
				r.index, r.rate, n.Name, len(names), node, strings.Join(names, ", "))
		}
	}
}
