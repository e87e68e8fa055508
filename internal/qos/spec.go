package qos

import (
	"fmt"
	"net/netip"
	"sort"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/nqos/nqos/api/v1alpha1"
)

// Schema bounds of the NetworkQoS CRD.
const (
	maxRules            = 20
	maxNetworkSelectors = 5
	maxPriority         = 100
	maxDSCP             = 63
	maxPort             = 65535
)

// protocols maps the CRD's protocol values to OVN match fields.
var protocols = map[string]string{"TCP": "tcp", "UDP": "udp", "SCTP": "sctp"}

// spec is a validated NetworkQoS spec: every value that reaches a match
// has been parsed into a typed value.
type spec struct {
	priority int
	perPort  bool // bandwidth rules get one row per selected port
	pods     labels.Selector
	networks []netSel
	rules    []rule
}

type rule struct {
	index       int
	dscp        int
	rate, burst uint32
	dests       []dest
	ports       []protoPorts // sorted by protocol
	labeled     bool         // some destination uses podSelector/namespaceSelector
}

// dest is one classifier destination: an ipBlock, "any", or a selector
// destination resolved to address sets.
type dest struct {
	index      int
	block      *ipBlock
	any        bool
	pods       labels.Selector // nil: every pod
	namespaces labels.Selector // nil with ownNS: the object's namespace
	ownNS      bool
}

type ipBlock struct {
	cidr   netip.Prefix
	except []netip.Prefix
}

// protoPorts is one protocol and its destination ports (sorted, unique);
// no ports means every port.
type protoPorts struct {
	proto string
	ports []int
}

// fieldError names the object and the field of an invalid spec.
type fieldError struct {
	object, field, msg string
}

func (e *fieldError) Error() string { return e.object + ": " + e.field + ": " + e.msg }

// parseSpec validates nq's spec the way the API server's schema and CEL
// rules would, plus the compiler's stricter checks.
func parseSpec(nq *v1alpha1.NetworkQoS) (*spec, error) {
	key := nq.Namespace + "/" + nq.Name
	fail := func(field, format string, a ...any) error {
		return &fieldError{object: key, field: field, msg: fmt.Sprintf(format, a...)}
	}
	s := nq.Spec
	if s.Priority < 0 || s.Priority > maxPriority {
		return nil, fail("spec.priority", "%d out of range 0..%d", s.Priority, maxPriority)
	}
	if len(s.Egress) > maxRules {
		return nil, fail("spec.egress", "%d rules, at most %d allowed", len(s.Egress), maxRules)
	}
	nets, err := parseNetworkSelectors(s.NetworkSelectors, fail)
	if err != nil {
		return nil, err
	}
	pods, err := metav1.LabelSelectorAsSelector(&s.PodSelector)
	if err != nil {
		return nil, fail("spec.podSelector", "%v", err)
	}
	perPort, err := parseBandwidthScope(nq.Annotations, fail)
	if err != nil {
		return nil, err
	}
	out := &spec{priority: s.Priority, perPort: perPort, pods: pods, networks: nets}
	for i := range s.Egress {
		r, err := parseRule(i, &s.Egress[i], fail)
		if err != nil {
			return nil, err
		}
		out.rules = append(out.rules, r)
	}
	return out, nil
}

type failFunc func(field, format string, a ...any) error

// parseBandwidthScope reads the bandwidth-scope annotation: absent or
// per-node is the per-rule-per-node meter, per-port one meter per port.
func parseBandwidthScope(ann map[string]string, fail failFunc) (bool, error) {
	v, ok := ann[BandwidthScopeAnnotation]
	if !ok {
		return false, nil
	}
	switch v {
	case BandwidthScopePerNode:
		return false, nil
	case BandwidthScopePerPort:
		return true, nil
	}
	return false, fail("metadata.annotations["+BandwidthScopeAnnotation+"]", "unknown value %q (allowed: %s, %s)",
		v, BandwidthScopePerNode, BandwidthScopePerPort)
}

func parseRule(i int, in *v1alpha1.Rule, fail failFunc) (rule, error) {
	path := fmt.Sprintf("spec.egress[%d]", i)
	r := rule{index: i, dscp: in.DSCP}
	if in.DSCP < 0 || in.DSCP > maxDSCP {
		return rule{}, fail(path+".dscp", "%d out of range 0..%d", in.DSCP, maxDSCP)
	}
	if in.Bandwidth != nil {
		r.rate, r.burst = in.Bandwidth.Rate, in.Bandwidth.Burst
		if r.burst > 0 && r.rate == 0 {
			return rule{}, fail(path+".bandwidth.burst", "burst %d needs a rate: OVN ignores a burst without one", r.burst)
		}
	}
	if in.Classifier == nil {
		return r, nil
	}
	for j := range in.Classifier.To {
		d, err := parseDest(j, &in.Classifier.To[j], fmt.Sprintf("%s.classifier.to[%d]", path, j), fail)
		if err != nil {
			return rule{}, err
		}
		r.labeled = r.labeled || hasSelector(&in.Classifier.To[j])
		r.dests = append(r.dests, d)
	}
	ports, err := parsePorts(in.Classifier.Ports, path+".classifier.ports", fail)
	if err != nil {
		return rule{}, err
	}
	r.ports = ports
	return r, nil
}

// metered reports whether the rule has a bandwidth.
func (r rule) metered() bool { return r.rate > 0 || r.burst > 0 }

func hasSelector(d *v1alpha1.Destination) bool {
	return d.PodSelector != nil || d.NamespaceSelector != nil
}

// parseDest validates one destination. An empty destination, or one whose
// selectors are both nil or empty, means any destination (upstream).
func parseDest(j int, in *v1alpha1.Destination, path string, fail failFunc) (dest, error) {
	d := dest{index: j}
	if in.IPBlock != nil {
		if hasSelector(in) {
			return dest{}, fail(path, "podSelector/namespaceSelector and ipBlock are mutually exclusive")
		}
		b, err := parseIPBlock(in.IPBlock, path+".ipBlock", fail)
		d.block = b
		return d, err
	}
	if isEmptySelector(in.PodSelector) && isEmptySelector(in.NamespaceSelector) {
		d.any = true
		return d, nil
	}
	var err error
	if !isEmptySelector(in.PodSelector) {
		if d.pods, err = metav1.LabelSelectorAsSelector(in.PodSelector); err != nil {
			return dest{}, fail(path+".podSelector", "%v", err)
		}
	}
	if in.NamespaceSelector == nil {
		d.ownNS = true
		return d, nil
	}
	if d.namespaces, err = metav1.LabelSelectorAsSelector(in.NamespaceSelector); err != nil {
		return dest{}, fail(path+".namespaceSelector", "%v", err)
	}
	return d, nil
}

func isEmptySelector(s *metav1.LabelSelector) bool {
	return s == nil || len(s.MatchLabels) == 0 && len(s.MatchExpressions) == 0
}

// parseIPBlock parses the CIDR and its exceptions; every exception must
// be a CIDR of the same family inside the block.
func parseIPBlock(in *v1alpha1.IPBlock, path string, fail failFunc) (*ipBlock, error) {
	cidr, err := netip.ParsePrefix(in.CIDR)
	if err != nil {
		return nil, fail(path+".cidr", "invalid CIDR %q", in.CIDR)
	}
	if cidr.Addr().Is4In6() {
		return nil, fail(path+".cidr", "%q is an IPv4-mapped IPv6 CIDR: it would match IPv6 packets only, never the IPv4 traffic it names; write the IPv4 CIDR", in.CIDR)
	}
	b := &ipBlock{cidr: cidr.Masked()}
	for k, e := range in.Except {
		field := fmt.Sprintf("%s.except[%d]", path, k)
		p, err := netip.ParsePrefix(e)
		if err != nil {
			return nil, fail(field, "invalid CIDR %q", e)
		}
		if p.Addr().Is4In6() {
			return nil, fail(field, "%q is an IPv4-mapped IPv6 CIDR; write the IPv4 CIDR", e)
		}
		if p.Addr().Is4() != cidr.Addr().Is4() {
			return nil, fail(field, "%q is not of the same IP family as cidr %q", e, in.CIDR)
		}
		if p.Bits() < b.cidr.Bits() || !b.cidr.Contains(p.Addr()) {
			return nil, fail(field, "%q is not inside cidr %q", e, in.CIDR)
		}
		b.except = append(b.except, p.Masked())
	}
	sort.Slice(b.except, func(i, j int) bool { return b.except[i].String() < b.except[j].String() })
	return b, nil
}

// parsePorts groups ports by protocol. A protocol listed without a port
// matches every port of it, which absorbs its port-specific entries.
func parsePorts(in []*v1alpha1.Port, path string, fail failFunc) ([]protoPorts, error) {
	byProto := map[string]map[int]bool{}
	for k, p := range in {
		field := fmt.Sprintf("%s[%d]", path, k)
		if p == nil {
			return nil, fail(field, "null entry")
		}
		proto, ok := protocols[p.Protocol]
		if !ok {
			if p.Protocol == "" {
				return nil, fail(field+".protocol", "required (a port needs a protocol)")
			}
			return nil, fail(field+".protocol", "unknown protocol %q (allowed: TCP, UDP, SCTP)", p.Protocol)
		}
		set, seen := byProto[proto]
		if !seen {
			set = map[int]bool{}
			byProto[proto] = set
		}
		if p.Port == nil {
			set[0] = true
			continue
		}
		if *p.Port < 1 || *p.Port > maxPort {
			return nil, fail(field+".port", "%d out of range 1..%d", *p.Port, maxPort)
		}
		set[int(*p.Port)] = true
	}
	return groupPorts(byProto), nil
}

func groupPorts(byProto map[string]map[int]bool) []protoPorts {
	out := make([]protoPorts, 0, len(byProto))
	for proto, set := range byProto {
		pp := protoPorts{proto: proto}
		if !set[0] {
			for port := range set {
				pp.ports = append(pp.ports, port)
			}
			sort.Ints(pp.ports)
		}
		out = append(out, pp)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].proto < out[j].proto })
	return out
}

// netSel is a validated network selector.
type netSel struct {
	typ        string
	namespaces labels.Selector // NAD selector only
	networks   labels.Selector
}

// parseNetworkSelectors applies the schema and CEL rules of
// spec.networkSelectors: 1..5 entries, one per type, only the NAD and
// CUDN types admitted, and the union member matching the type.
func parseNetworkSelectors(sels v1alpha1.NetworkSelectors, fail failFunc) ([]netSel, error) {
	if sels != nil && len(sels) == 0 {
		return nil, fail("spec.networkSelectors", "must have at least 1 entry")
	}
	if len(sels) > maxNetworkSelectors {
		return nil, fail("spec.networkSelectors", "%d entries, at most %d allowed", len(sels), maxNetworkSelectors)
	}
	seen := map[string]bool{}
	out := make([]netSel, 0, len(sels))
	for i := range sels {
		path := fmt.Sprintf("spec.networkSelectors[%d]", i)
		s := &sels[i]
		if seen[s.NetworkSelectionType] {
			return nil, fail(path+".networkSelectionType", "duplicate value %q", s.NetworkSelectionType)
		}
		seen[s.NetworkSelectionType] = true
		if err := checkSelectorUnion(s, path, fail); err != nil {
			return nil, err
		}
		ns, err := parseNetSel(s, path, fail)
		if err != nil {
			return nil, err
		}
		out = append(out, ns)
	}
	return out, nil
}

func checkSelectorUnion(s *v1alpha1.NetworkSelector, path string, fail failFunc) error {
	switch s.NetworkSelectionType {
	case v1alpha1.NetworkAttachmentDefinitions, v1alpha1.ClusterUserDefinedNetworks:
	default:
		return fail(path+".networkSelectionType", "unsupported network selection type %q (allowed: %s, %s)",
			s.NetworkSelectionType, v1alpha1.ClusterUserDefinedNetworks, v1alpha1.NetworkAttachmentDefinitions)
	}
	members := map[string]bool{
		v1alpha1.ClusterUserDefinedNetworks:   s.ClusterUserDefinedNetworkSelector != nil,
		v1alpha1.PrimaryUserDefinedNetworks:   s.PrimaryUserDefinedNetworkSelector != nil,
		v1alpha1.SecondaryUserDefinedNetworks: s.SecondaryUserDefinedNetworkSelector != nil,
		v1alpha1.NetworkAttachmentDefinitions: s.NetworkAttachmentDefinitionSelector != nil,
	}
	for typ, set := range members {
		if set != (typ == s.NetworkSelectionType) {
			return fail(path, "inconsistent selector: networkSelectionType %s needs exactly its own selector member", s.NetworkSelectionType)
		}
	}
	return nil
}

func parseNetSel(s *v1alpha1.NetworkSelector, path string, fail failFunc) (netSel, error) {
	out := netSel{typ: s.NetworkSelectionType}
	var err error
	if c := s.ClusterUserDefinedNetworkSelector; c != nil {
		if out.networks, err = metav1.LabelSelectorAsSelector(&c.NetworkSelector); err != nil {
			return netSel{}, fail(path+".clusterUserDefinedNetworkSelector.networkSelector", "%v", err)
		}
		return out, nil
	}
	c := s.NetworkAttachmentDefinitionSelector
	if out.namespaces, err = metav1.LabelSelectorAsSelector(&c.NamespaceSelector); err != nil {
		return netSel{}, fail(path+".networkAttachmentDefinitionSelector.namespaceSelector", "%v", err)
	}
	if out.networks, err = metav1.LabelSelectorAsSelector(&c.NetworkSelector); err != nil {
		return netSel{}, fail(path+".networkAttachmentDefinitionSelector.networkSelector", "%v", err)
	}
	return out, nil
}
