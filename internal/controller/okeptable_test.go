package controller

import (
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/nqos/nqos/internal/ovnnb/nbtest"
	"github.com/nqos/nqos/internal/qos"
)

// okepRow is one QoS row of the OKEP-6815 worked example, written as
// literals from the OKEP's table, never computed by the compiler.
type okepRow struct {
	object         string
	priority, dscp int
	rate, burst    int    // kbps and kbits; 0 rate: no bandwidth column
	dest           string // the match after "inport == @<pg> && "
}

var okepTable = []okepRow{
	{"tier-staging", 10400, 10, 0, 0, "(ip4 || ip6)"},
	{"tier-production", 10600, 46, 0, 0, "(ip4 || ip6)"},
	{"backup-deprioritization", 10700, 46, 0, 0, "(ip4 || ip6)"},
	{"backup-deprioritization", 10701, 8, 100000, 5000, "ip4.dst == 10.20.0.0/16 && tcp && tcp.dst == 2049"},
}

// okepMembers are the pods in each object's port group: the payments VM
// (app=payments, tier=production) is in two.
var okepMembers = map[string][]string{
	"tier-production":         {"virt-launcher-payments"},
	"tier-staging":            {"virt-launcher-staging"},
	"backup-deprioritization": {"virt-launcher-payments"},
}

// okepPortGroup is the port group name of an object on the test network,
// from the naming contract:
// "a" + FNV-64a("<net>-nqos-controller:NetworkQoS:<ns>:<name>").
func (e *env) okepPortGroup(object string) string {
	return hashForOVN(e.net + "-nqos-controller:NetworkQoS:" + e.ns + ":" + object)
}

// checkOKEPTable compares the raw NB (ovn-nbctl, no cache) with the OKEP
// table: every QoS row's priority, direction, match, DSCP and bandwidth,
// its binding to the test switch, the port groups' members, and no
// address set (the destinations are ipBlock literals).
func (e *env) checkOKEPTable() {
	e.t.Helper()
	rows := e.ownedRaw()
	byPrio := map[int]nbtest.QoS{}
	for _, q := range rows {
		byPrio[q.Priority] = q
	}
	if len(rows) != len(okepTable) || len(byPrio) != len(okepTable) {
		e.t.Errorf("NB has %d QoS rows (%d priorities), the OKEP table has %d: %s", len(rows), len(byPrio), len(okepTable), describeRaw(rows))
	}
	for _, w := range okepTable {
		q, ok := byPrio[w.priority]
		if !ok {
			e.t.Errorf("OKEP row %s priority %d: no NB QoS row with that priority; NB rows: %s", w.object, w.priority, describeRaw(rows))
			continue
		}
		if problems := e.okepRowProblems(w, q); len(problems) > 0 {
			e.t.Errorf("OKEP row %s priority %d: %s", w.object, w.priority, strings.Join(problems, "; "))
		}
	}
	e.checkOKEPBinding(rows)
	e.checkOKEPGroups()
}

// okepRowProblems lists how the NB row q differs from the table row w.
func (e *env) okepRowProblems(w okepRow, q nbtest.QoS) []string {
	var out []string
	if want := "inport == @" + e.okepPortGroup(w.object) + " && " + w.dest; q.Match != want {
		out = append(out, fmt.Sprintf("match %q, want %q", q.Match, want))
	}
	if q.Direction != "to-lport" {
		out = append(out, fmt.Sprintf("direction %q, want to-lport", q.Direction))
	}
	if want := map[string]int{"dscp": w.dscp}; !maps.Equal(q.Action, want) {
		out = append(out, fmt.Sprintf("action %v, want %v", q.Action, want))
	}
	want := map[string]int{}
	if w.rate > 0 {
		want = map[string]int{"rate": w.rate, "burst": w.burst}
	}
	if len(q.Bandwidth)+len(want) > 0 && !maps.Equal(q.Bandwidth, want) {
		out = append(out, fmt.Sprintf("bandwidth %v, want %v", q.Bandwidth, want))
	}
	if got := q.ExternalIDs[qos.ObjectNameKey]; got != e.ns+":"+w.object {
		out = append(out, fmt.Sprintf("owner %q, want %q", got, e.ns+":"+w.object))
	}
	return out
}

// checkOKEPBinding checks that the test switch's qos_rules are exactly
// the object rows.
func (e *env) checkOKEPBinding(rows []nbtest.QoS) {
	e.t.Helper()
	switches, err := e.nb.ListSwitches()
	must(e, err)
	var want []string
	for _, q := range rows {
		want = append(want, q.UUID)
	}
	sort.Strings(want)
	for _, ls := range switches {
		if ls.Name != e.switchName() {
			continue
		}
		got := slices.Sorted(slices.Values(ls.QoSRules))
		if !slices.Equal(got, want) {
			e.t.Errorf("switch %s qos_rules %v, want the %d OKEP rows %v", ls.Name, got, len(want), want)
		}
		return
	}
	e.t.Errorf("switch %s not in the NB", e.switchName())
}

// checkOKEPGroups checks each object's port group members (by LSP name)
// and that the objects own no address set.
func (e *env) checkOKEPGroups() {
	e.t.Helper()
	ports, err := e.nb.ListPorts()
	must(e, err)
	names := map[string]string{}
	for _, p := range ports {
		names[p.UUID] = p.Name
	}
	pgs, err := e.nb.ListPortGroups()
	must(e, err)
	members := map[string][]string{}
	for _, pg := range pgs {
		if strings.HasPrefix(pg.ExternalIDs[qos.ObjectNameKey], e.ns+":") {
			m := []string{}
			for _, u := range pg.Ports {
				m = append(m, names[u])
			}
			members[pg.Name] = slices.Sorted(slices.Values(m))
		}
	}
	want := map[string][]string{}
	for object, pods := range okepMembers {
		for _, pod := range pods {
			want[e.okepPortGroup(object)] = append(want[e.okepPortGroup(object)], e.lsp(nadName, pod))
		}
	}
	if !maps.EqualFunc(members, want, slices.Equal) {
		e.t.Errorf("port groups (name -> member LSPs) %v, want %v", members, want)
	}
	sets, err := e.nb.ListAddressSets()
	must(e, err)
	for _, as := range sets {
		if strings.HasPrefix(as.ExternalIDs[qos.ObjectNameKey], e.ns+":") {
			e.t.Errorf("OKEP objects own address set %s %v (destinations are ipBlock literals)", as.Name, as.Addresses)
		}
	}
}

// ownedRaw is the raw QoS table restricted to this test's namespace.
func (e *env) ownedRaw() []nbtest.QoS {
	e.t.Helper()
	var out []nbtest.QoS
	for _, q := range e.rawQoS() {
		if strings.HasPrefix(q.ExternalIDs[qos.ObjectNameKey], e.ns+":") {
			out = append(out, q)
		}
	}
	return out
}

func describeRaw(rows []nbtest.QoS) string {
	parts := make([]string, len(rows))
	for i, q := range rows {
		parts[i] = fmt.Sprintf("{%d %s %q action %v bandwidth %v}", q.Priority, q.ExternalIDs[qos.ObjectNameKey], q.Match, q.Action, q.Bandwidth)
	}
	sort.Strings(parts)
	return "[" + strings.Join(parts, " ") + "]"
}

// An ipBlock with except reaches the NB as the literal upstream format
// (checked against a literal, not the compiler's output).
func TestIPBlockExceptLiteral(t *testing.T) {
	e := newEnv(t)
	e.goldVM()
	e.createNQ(e.nqos("gold", 50, map[string]string{"tier": "gold"}, []string{e.net},
		ruleSpec{dscp: 8, cidrs: []string{"10.20.0.0/16"}, except: []string{"10.20.5.0/24", "10.20.9.9/32"}}))
	e.waitConditions("gold", acceptedTrue, readyTrue)
	want := "inport == @" + e.okepPortGroup("gold") + " && ip4.dst == 10.20.0.0/16 && ip4.dst != {10.20.5.0/24,10.20.9.9}"
	rows := e.ownedRaw()
	if len(rows) != 1 || rows[0].Match != want || rows[0].Priority != 10500 {
		t.Errorf("NB rows %s, want one row at priority 10500 with match %q", describeRaw(rows), want)
	}
}
