package qos

import (
	"net/netip"
	"sort"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/nqos/nqos/api/v1alpha1"
	"github.com/nqos/nqos/internal/seeded"
)

// objectCompiler builds the rows of one accepted NetworkQoS.
type objectCompiler struct {
	nq    *v1alpha1.NetworkQoS
	sp    *spec
	f     Facts
	node  string
	scope Scope
	res   *Result
}

// network adds the port group, destination address sets and QoS rows of
// the object on one network.
func (c *objectCompiler) network(n Network) {
	if !supportedTopology(n.Topology) {
		c.res.warn(WarningUnsupportedTopology, "spec.networkSelectors", "network %s has topology %q; only localnet and layer2 are supported, no rows for it",
			n.Name, n.Topology)
		return
	}
	if ok, why := c.scope.inScope(n); !ok {
		c.res.warn(WarningOutOfScope, "spec.networkSelectors", "%s", why)
		return
	}
	ns, name := c.nq.Namespace, c.nq.Name
	nads := make(map[string]bool, len(n.NADs))
	for _, k := range n.NADs {
		nads[k] = true
	}
	pg := PortGroup{
		Name:        PortGroupName(ControllerName(n.Name), ns, name),
		Ports:       c.sourcePorts(n, nads),
		ExternalIDs: portGroupIDs(n.Name, ns, name),
	}
	c.res.PortGroups = append(c.res.PortGroups, pg)
	source := sourceMatch(pg.Name)
	if seeded.Active == seeded.SourceByIP {
		source = c.sourceByIP(n, nads)
	}
	for _, r := range c.sp.rules {
		sets := c.addressSets(n, nads, r)
		if c.sp.perPort && r.metered() {
			for _, port := range pg.Ports {
				c.res.QoS = append(c.res.QoS, c.row(n, r, portSourceMatch(port), sets, qosPortIDs(n.Name, ns, name, r.index, port)))
			}
			continue
		}
		c.res.QoS = append(c.res.QoS, c.row(n, r, source, sets, qosIDs(n.Name, ns, name, r.index)))
	}
}

// row is the QoS row of rule r on network n for one source fragment.
func (c *objectCompiler) row(n Network, r rule, source string, sets map[int]destSets, ids map[string]string) QoSRow {
	row := QoSRow{
		Switch:      n.Switch,
		Direction:   DirectionToLport,
		Priority:    qosPriority(c.sp.priority, r.index),
		Match:       buildMatch(source, r, sets),
		Action:      Action{DSCP: r.dscp},
		ExternalIDs: ids,
	}
	if seeded.Active == seeded.DSCPOffByOne {
		row.Action.DSCP++
	}
	if r.metered() {
		row.Bandwidth = &Bandwidth{Rate: r.rate, Burst: r.burst}
		if seeded.Active == seeded.BurstUnits {
			row.Bandwidth.Burst = kilobitsAsBytes(r.burst)
		}
	}
	return row
}

// sourcePorts returns the LSPs of the selected source pods on a network,
// warning about caps they share on a node.
func (c *objectCompiler) sourcePorts(n Network, nads map[string]bool) []string {
	ports := []string{}
	pods := c.sourcePods()
	for _, p := range pods {
		ports = append(ports, podPorts(p, nads)...)
	}
	c.sharedCapWarnings(n, pods, nads)
	return sortUnique(ports)
}

// sourcePods are the eligible pods of the object's namespace that its
// podSelector selects, on c.node when it is set.
func (c *objectCompiler) sourcePods() []*corev1.Pod {
	var out []*corev1.Pod
	for _, p := range c.f.PodsInNamespace(c.nq.Namespace) {
		if !eligible(p) || (c.node != "" && p.Spec.NodeName != c.node) {
			continue
		}
		if c.sp.pods.Matches(labels.Set(p.Labels)) {
			out = append(out, p)
		}
	}
	return out
}

// addressSets builds the destination address sets of a rule's selector
// destinations, one per (destination, family), and returns their names.
func (c *objectCompiler) addressSets(n Network, nads map[string]bool, r rule) map[int]destSets {
	out := map[int]destSets{}
	for _, d := range r.dests {
		if d.block != nil || d.any {
			continue
		}
		addrs := c.destAddresses(d, nads)
		names := destSets{}
		for _, fam := range n.families() {
			ids := addressSetIDs(n.Name, c.nq.Namespace, c.nq.Name, r.index, d.index, fam)
			as := AddressSet{Name: hashForOVN(ids[PrimaryIDKey]), Addresses: filterFamily(addrs, fam), ExternalIDs: ids}
			names[fam] = as.Name
			c.res.AddressSets = append(c.res.AddressSets, as)
		}
		out[d.index] = names
	}
	return out
}

// destAddresses returns the IPs on the network of the pods a selector
// destination selects, sorted and unique.
func (c *objectCompiler) destAddresses(d dest, nads map[string]bool) []netip.Addr {
	var addrs []netip.Addr
	for _, ns := range c.destNamespaces(d) {
		for _, p := range c.f.PodsInNamespace(ns) {
			if !eligible(p) || (d.pods != nil && !d.pods.Matches(labels.Set(p.Labels))) {
				continue
			}
			addrs = append(addrs, podIPs(p, nads)...)
		}
	}
	sort.Slice(addrs, func(i, j int) bool { return addrs[i].Less(addrs[j]) })
	return addrs
}

// destNamespaces is the object's namespace when only podSelector is set
// (as NetworkPolicy), else the namespaces namespaceSelector selects.
func (c *objectCompiler) destNamespaces(d dest) []string {
	if d.ownNS {
		return []string{c.nq.Namespace}
	}
	var out []string
	for _, ns := range c.f.Namespaces() {
		if d.namespaces.Matches(labels.Set(ns.Labels)) {
			out = append(out, ns.Name)
		}
	}
	return out
}

// filterFamily renders the addresses of one family, unique.
func filterFamily(addrs []netip.Addr, fam string) []string {
	out := []string{}
	for i, a := range addrs {
		if a.Is4() != (fam == "v4") || (i > 0 && a == addrs[i-1]) {
			continue
		}
		out = append(out, a.String())
	}
	return out
}
