package qos

import (
	"cmp"
	"fmt"
	"sort"
	"strconv"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/nqos/nqos/api/v1alpha1"
	"github.com/nqos/nqos/internal/seeded"
)

// Result is the compiled state of one NetworkQoS.
type Result struct {
	Namespace, Name string
	// Accepted is the Accepted condition: True/ConfigurationAccepted,
	// False/UnsupportedDestinationSelector or False/InvalidSpec.
	Accepted Condition
	// Err is set for an invalid spec (it names the object and field);
	// then there are no rows.
	Err         error
	Networks    []Network // resolved networks, sorted by name
	PortGroups  []PortGroup
	AddressSets []AddressSet
	QoS         []QoSRow
	Warnings    []Warning
}

// Key is "namespace/name".
func (r Result) Key() string { return r.Namespace + "/" + r.Name }

// CompileObject compiles one NetworkQoS against f. With a node name only
// pods whose spec.nodeName is that node are port-group members; "" means
// every node.
func CompileObject(nq *v1alpha1.NetworkQoS, f Facts, node string) Result {
	return compileObject(nq, f, Options{Node: node}, indexNADs(f))
}

// CompileObjectWith is CompileObject with every option.
func CompileObjectWith(nq *v1alpha1.NetworkQoS, f Facts, o Options) Result {
	return compileObject(nq, f, o, indexNADs(f))
}

// CompileObjects compiles each of nqs against f as CompileObject does,
// in order, parsing each NAD config once for all of them.
func CompileObjects(nqs []*v1alpha1.NetworkQoS, f Facts, node string) []Result {
	return CompileObjectsWith(nqs, f, Options{Node: node})
}

// CompileObjectsWith is CompileObjects with every option.
func CompileObjectsWith(nqs []*v1alpha1.NetworkQoS, f Facts, o Options) []Result {
	idx := indexNADs(f)
	rs := make([]Result, 0, len(nqs))
	for _, nq := range nqs {
		rs = append(rs, compileObject(nq, f, o, idx))
	}
	return rs
}

func compileObject(nq *v1alpha1.NetworkQoS, f Facts, o Options, idx *nadIndex) Result {
	r := Result{Namespace: nq.Namespace, Name: nq.Name}
	sp, err := parseSpec(nq)
	if err != nil {
		r.Err = err
		r.Accepted = condition(metav1.ConditionFalse, ReasonInvalidSpec, err.Error())
		return r
	}
	if len(sp.networks) == 0 {
		r.Accepted = condition(metav1.ConditionTrue, ReasonConfigurationAccepted,
			"no networkSelectors: the NetworkQoS applies to the default network only, which nqos does not manage")
		r.warn(WarningNoNetwork, "spec.networkSelectors", "no networkSelectors: only the default network is selected, which nqos does not manage; no rows")
		return r
	}
	hostBitWarnings(nq, &r)
	shadowWarnings(sp, &r)
	nets, warns := resolveNetworks(sp.networks, f, idx)
	r.Networks = nets
	for _, w := range warns {
		w.Object = r.Key()
		r.Warnings = append(r.Warnings, w)
	}
	if msg := rejection(sp, nets); msg != "" {
		r.Accepted = condition(metav1.ConditionFalse, ReasonUnsupportedDestinationSelector, msg)
		if seeded.Active == seeded.PartialRejected {
			buildRows(nq, sp, f, o, &r, withDiscoverableIPs(nets))
		}
		return r
	}
	r.Accepted = condition(metav1.ConditionTrue, ReasonConfigurationAccepted,
		"the configuration is supported on every selected network")
	if len(nets) == 0 {
		r.warn(WarningNoNetwork, "spec.networkSelectors", "networkSelectors select no network; no rows")
	}
	buildRows(nq, sp, f, o, &r, nets)
	return r
}

// buildRows adds the rows of an accepted object on nets to r, sorted
// (a rejected one only under the PartialRejected seeded bug).
func buildRows(nq *v1alpha1.NetworkQoS, sp *spec, f Facts, o Options, r *Result, nets []Network) {
	c := objectCompiler{nq: nq, sp: sp, f: f, node: o.Node, scope: o.Scope, res: r}
	for _, n := range nets {
		c.network(n)
	}
	sortResult(r)
}

func condition(status metav1.ConditionStatus, reason, msg string) Condition {
	return Condition{Type: ConditionAccepted, Status: string(status), Reason: reason, Message: msg}
}

// rejection decides Accepted=False per OKEP-6815: a podSelector or
// namespaceSelector destination (even an empty one, which upstream reads
// as "any destination") on any selected network without discoverable pod
// IPs rejects the whole object, on every network. The OKEP rejects the
// selector forms, not their resolution, so "{}" is rejected too; ipBlock
// 0.0.0.0/0 and ::/0 express "any destination" on such networks.
func rejection(sp *spec, nets []Network) string {
	var rules []string
	for _, r := range sp.rules {
		if r.labeled {
			rules = append(rules, strconv.Itoa(r.index))
		}
	}
	var bad []string
	for _, n := range nets {
		if supportedTopology(n.Topology) && !n.DiscoverablePodIPs() {
			bad = append(bad, n.Name)
		}
	}
	if len(rules) == 0 || len(bad) == 0 {
		return ""
	}
	noun := "egress rule "
	if len(rules) > 1 {
		noun = "egress rules "
	}
	return fmt.Sprintf("%s%s: destination podSelector/namespaceSelector is not supported on networks without discoverable pod IPs (%s); the NetworkQoS is rejected; use ipBlock instead",
		noun, strings.Join(rules, ", "), strings.Join(bad, ", "))
}

func supportedTopology(t string) bool { return t == TopologyLocalnet || t == TopologyLayer2 }

func sortResult(r *Result) {
	sort.Slice(r.PortGroups, func(i, j int) bool { return r.PortGroups[i].Name < r.PortGroups[j].Name })
	sort.Slice(r.AddressSets, func(i, j int) bool { return r.AddressSets[i].Name < r.AddressSets[j].Name })
	sortQoS(r.QoS)
}

func sortQoS(rows []QoSRow) {
	sort.Slice(rows, func(i, j int) bool {
		a, b := rows[i], rows[j]
		return CompareOnSwitch(a.Switch, a.Priority, a.ExternalIDs[PrimaryIDKey], b.Switch, b.Priority, b.ExternalIDs[PrimaryIDKey]) < 0
	})
}

// CompareOnSwitch orders QoS rows as nqos lists them: by logical switch,
// then priority, then a key unique among the switch's rows (the row's
// k8s.ovn.org/id or its UUID). It returns -1, 0 or +1 like cmp.Compare.
func CompareOnSwitch(aSwitch string, aPriority int, aKey string, bSwitch string, bPriority int, bKey string) int {
	return cmp.Or(strings.Compare(aSwitch, bSwitch), cmp.Compare(aPriority, bPriority), strings.Compare(aKey, bKey))
}
