package controller

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/nqos/nqos/internal/qos"
)

// portGroupOf returns the NB port group of object name (test namespace).
func (e *env) portGroupOf(name string) (qos.PortGroup, bool) {
	for _, pg := range e.ownedRows().PortGroups {
		if pg.ExternalIDs[qos.ObjectNameKey] == e.ns+":"+name {
			return pg, true
		}
	}
	return qos.PortGroup{}, false
}

func (e *env) waitMembers(name string, want ...string) {
	e.t.Helper()
	slices.Sort(want)
	e.eventually(fmt.Sprintf("port group of %s = %v", name, want), 20*time.Second, func() (bool, string) {
		pg, ok := e.portGroupOf(name)
		if !ok {
			return false, "no port group"
		}
		return slices.Equal(pg.Ports, want) || (len(pg.Ports) == 0 && len(want) == 0), fmt.Sprintf("ports %v", pg.Ports)
	})
}

// A pod selected before its LSP exists converges when the LSP appears,
// through the NB cache callback alone: the test first lets the retry
// backoff grow beyond the convergence deadline.
func TestPodBeforeLSPConvergesOnPortAdd(t *testing.T) {
	e := newEnv(t)
	c := e.start("")
	e.createNAD(nadName, e.net, "")
	e.createPod("vm1", "node-a", nadName, map[string]string{"tier": "gold"})
	e.createNQ(e.nqos("gold", 50, map[string]string{"tier": "gold"}, []string{e.net}, ruleSpec{dscp: 46}))
	e.waitConditions("gold", acceptedTrue, cond{readyTrue.typ, "False", reasonPortsPending})
	nq, _ := e.getNQ("gold")
	if c := meta.FindStatusCondition(nq.Status.Conditions, readyTrue.typ); !strings.Contains(c.Message, e.lsp(nadName, "vm1")) {
		t.Errorf("PortsPending message %q does not name the missing port", c.Message)
	}
	key := e.ns + "/gold"
	// 11 requeues: the next backoff step is 5ms*2^10 = 5.12s.
	e.eventually("backoff to grow", 30*time.Second, func() (bool, string) {
		n := c.queue.NumRequeues(key)
		return n >= 11, fmt.Sprintf("%d requeues", n)
	})
	added := time.Now()
	e.addPorts(e.lsp(nadName, "vm1"))
	deadline := 2 * time.Second
	e.eventually("port group membership after LSP add", deadline, func() (bool, string) {
		pg, ok := e.portGroupOf("gold")
		return ok && slices.Equal(pg.Ports, []string{e.lsp(nadName, "vm1")}), fmt.Sprintf("%+v", pg)
	})
	t.Logf("LSP add to port-group membership: %v", time.Since(added))
	e.waitConditions("gold", acceptedTrue, readyTrue)
	e.waitRowsMatchCompiler("")
}

func TestLabelChangeMovesPodInAndOut(t *testing.T) {
	e := newEnv(t)
	e.withVMs("", vm{"vm1", "node-a", "gold"}, vm{"vm2", "node-a", "bronze"})
	e.createNQ(e.nqos("gold", 50, map[string]string{"tier": "gold"}, []string{e.net}, ruleSpec{dscp: 46}))
	e.waitMembers("gold", e.lsp(nadName, "vm1"))

	e.labelPod("vm2", map[string]string{"tier": "gold"})
	e.waitMembers("gold", e.lsp(nadName, "vm1"), e.lsp(nadName, "vm2"))
	e.waitRowsMatchCompiler("")

	e.labelPod("vm1", map[string]string{"tier": "bronze"})
	e.waitMembers("gold", e.lsp(nadName, "vm2"))
	e.waitRowsMatchCompiler("")
	e.waitConditions("gold", acceptedTrue, readyTrue)
}

// Accepted=False removes the rows of a previously accepted revision, in
// an order that never leaves a QoS row referencing a deleted port group,
// and flips back when the spec is corrected; status.status follows
// (applied, not correctly applied, applied).
func TestRejectedRevisionTearsDownAndRecovers(t *testing.T) {
	e := newEnv(t)
	e.goldVM()
	stop := e.watchNB()
	good := ruleSpec{dscp: 8, cidrs: []string{"10.20.0.0/16"}}
	e.createNQ(e.nqos("gold", 50, map[string]string{"tier": "gold"}, []string{e.net}, ruleSpec{dscp: 46}, good))
	e.waitConditions("gold", acceptedTrue, readyTrue)
	e.waitAggregate("gold", statusApplied)
	if rows := e.waitRowsMatchCompiler(""); len(rows.QoS) != 2 {
		t.Fatalf("accepted revision: want 2 QoS rows, got %d", len(rows.QoS))
	}

	e.updateEgress("gold", ruleSpec{dscp: 46}, ruleSpec{dscp: 8, podSel: map[string]string{"app": "backup"}})
	nq := e.waitConditions("gold",
		cond{qos.ConditionAccepted, "False", qos.ReasonUnsupportedDestinationSelector},
		cond{readyTrue.typ, "False", reasonNotAccepted})
	if c := meta.FindStatusCondition(nq.Status.Conditions, qos.ConditionAccepted); !strings.Contains(c.Message, "egress rule 1") {
		t.Errorf("Accepted message %q does not name egress rule 1", c.Message)
	}
	e.waitNoOwnedRows()
	e.waitAggregate("gold", statusNotApplied)

	e.updateEgress("gold", ruleSpec{dscp: 46}, good)
	e.waitConditions("gold", acceptedTrue, readyTrue)
	e.waitAggregate("gold", statusApplied)
	e.waitRowsMatchCompiler("")
	stop() // no transaction left a QoS row referencing a deleted port group
}

// Selecting a network with discoverable pod IPs and one without, with a
// labeled destination, rejects the whole object and names the network.
func TestMixedNetworksRejected(t *testing.T) {
	e := newEnv(t)
	ipamNet := e.net + "-ipam"
	e.nb.MustNBCtl("ls-add", qos.SwitchName(ipamNet, "localnet"))
	e.addPorts(e.lsp(nadName, "vm1"))
	e.start("")
	e.createNAD(nadName, e.net, "")
	e.createNAD("ipam-net", ipamNet, "10.50.0.0/24")
	e.createPod("vm1", "node-a", nadName, map[string]string{"tier": "gold"})
	e.createNQ(e.nqos("mixed", 50, map[string]string{"tier": "gold"}, []string{e.net, ipamNet},
		ruleSpec{dscp: 8, podSel: map[string]string{"app": "backup"}}))
	nq := e.waitConditions("mixed",
		cond{qos.ConditionAccepted, "False", qos.ReasonUnsupportedDestinationSelector},
		cond{readyTrue.typ, "False", reasonNotAccepted})
	if c := meta.FindStatusCondition(nq.Status.Conditions, qos.ConditionAccepted); !strings.Contains(c.Message, e.net) {
		t.Errorf("Accepted message %q does not name the ipamless network %s", c.Message, e.net)
	}
	// A labeled destination alone on the IPAM network is accepted.
	e.createNQ(e.nqos("ipam-only", 50, map[string]string{"tier": "gold"}, []string{ipamNet},
		ruleSpec{dscp: 8, podSel: map[string]string{"app": "backup"}}))
	e.waitConditions("ipam-only", acceptedTrue, cond{readyTrue.typ, "True", reasonSuccess})
	d := e.waitRowsMatchCompiler("")
	for _, q := range d.QoS {
		if q.ExternalIDs[qos.ObjectNameKey] == e.ns+":mixed" {
			t.Errorf("rejected object owns a QoS row: %+v", q)
		}
	}
}

// An invalid spec is rejected as InvalidSpec, installs nothing and is not
// retried; correcting it applies the object.
func TestInvalidSpecRejectedWithoutRetry(t *testing.T) {
	e := newEnv(t)
	c := e.goldVM()
	e.createNQ(e.nqos("bad", 50, map[string]string{"tier": "gold"}, []string{e.net}, ruleSpec{dscp: 8, cidrs: []string{"10.20.0.0/33"}}))
	nq := e.waitConditions("bad",
		cond{qos.ConditionAccepted, "False", qos.ReasonInvalidSpec},
		cond{readyTrue.typ, "False", reasonNotAccepted})
	msg := meta.FindStatusCondition(nq.Status.Conditions, qos.ConditionAccepted).Message
	if !strings.Contains(msg, "bad") || !strings.Contains(msg, "10.20.0.0/33") {
		t.Errorf("InvalidSpec message %q does not name the object and the bad value", msg)
	}
	if n := c.queue.NumRequeues(e.ns + "/bad"); n != 0 {
		t.Errorf("invalid spec was retried %d times", n)
	}
	if d := e.ownedRows(); len(d.QoS)+len(d.PortGroups)+len(d.AddressSets) != 0 {
		t.Errorf("invalid object owns rows: %+v", d)
	}
	e.updateEgress("bad", ruleSpec{dscp: 8, cidrs: []string{"10.20.0.0/16"}})
	e.waitConditions("bad", acceptedTrue, readyTrue)
	e.waitRowsMatchCompiler("")
}

// TestPerPortCaps: a per-port object on a real apiserver and NB gets one
// capped row per selected VM, the count in its readiness message; a VM
// whose label moves it out loses its row; an unknown scope value is
// Accepted=False/InvalidSpec naming the annotation, with no rows.
func TestPerPortCaps(t *testing.T) {
	e := newEnv(t)
	e.withVMs("", vm{"vm1", "node-a", "gold"}, vm{"vm2", "node-a", "gold"})
	nq := e.nqos("gold", 50, map[string]string{"tier": "gold"}, []string{e.net}, ruleSpec{dscp: 18}, ruleSpec{dscp: 10, cidrs: []string{"10.20.0.0/16"}, rate: 100000, burst: 5000})
	nq.Annotations = map[string]string{qos.BandwidthScopeAnnotation: qos.BandwidthScopePerPort}
	e.createNQ(nq)
	e.waitConditions("gold", acceptedTrue, readyTrue)
	rows := e.waitRowsMatchCompiler("")
	if len(rows.QoS) != 3 || qos.PerPortRows(rows.QoS) != 2 {
		t.Fatalf("rows %+v: want the marking row and 2 per-port rows", rows.QoS)
	}
	e.waitReadyMessage("gold", "2 per-port QoS rows")

	e.labelPod("vm2", map[string]string{"tier": "bronze"})
	e.waitMembers("gold", e.lsp(nadName, "vm1"))
	if rows := e.waitRowsMatchCompiler(""); qos.PerPortRows(rows.QoS) != 1 {
		t.Fatalf("after vm2 left: rows %+v", rows.QoS)
	}
	e.waitReadyMessage("gold", "1 per-port QoS rows")

	bad := e.nqos("bad", 40, map[string]string{"tier": "gold"}, []string{e.net}, ruleSpec{dscp: 8, rate: 1000})
	bad.Annotations = map[string]string{qos.BandwidthScopeAnnotation: "per-vm"}
	e.createNQ(bad)
	got := e.waitConditions("bad", cond{qos.ConditionAccepted, "False", qos.ReasonInvalidSpec})
	msg := meta.FindStatusCondition(got.Status.Conditions, qos.ConditionAccepted).Message
	if !strings.Contains(msg, e.ns+"/bad") || !strings.Contains(msg, "metadata.annotations["+qos.BandwidthScopeAnnotation+"]") {
		t.Errorf("InvalidSpec message %q does not name the object and the annotation", msg)
	}
	for _, q := range e.ownedRows().QoS {
		if q.ExternalIDs[qos.ObjectNameKey] == e.ns+":bad" {
			t.Errorf("rejected object owns %+v", q)
		}
	}
}

// TestDepartedPodKeepsPortUntilLSPGoes: a selected pod deleted while its
// LSP still exists (a launcher pod replaced under a running guest) keeps
// its port-group membership and per-port row until the LSP is deleted;
// then both go.
func TestDepartedPodKeepsPortUntilLSPGoes(t *testing.T) {
	e := newEnv(t)
	e.withVMs("", vm{"vm1", "node-a", "gold"}, vm{"vm2", "node-a", "gold"})
	nq := e.nqos("gold", 50, map[string]string{"tier": "gold"}, []string{e.net}, ruleSpec{dscp: 10, rate: 100000})
	nq.Annotations = map[string]string{qos.BandwidthScopeAnnotation: qos.BandwidthScopePerPort}
	e.createNQ(nq)
	e.waitReadyMessage("gold", "2 per-port QoS rows")
	gone := e.lsp(nadName, "vm2")
	must(e, e.kube.CoreV1().Pods(e.ns).Delete(e.ctx, "vm2", metav1.DeleteOptions{}))
	e.waitReadyMessage("gold", "1 per-port QoS rows") // the reconcile after the deletion ran
	if pg, ok := e.portGroupOf("gold"); !ok || !slices.Contains(pg.Ports, gone) {
		t.Fatalf("port group %+v lost %s while its LSP exists", pg, gone)
	}
	if n := qos.PerPortRows(e.ownedRows().QoS); n != 2 {
		t.Fatalf("%d per-port rows while %s's LSP exists, want 2", n, gone)
	}
	e.nb.MustNBCtl("lsp-del", gone)
	e.waitRowsMatchCompiler("")
	e.waitMembers("gold", e.lsp(nadName, "vm1"))
}

// waitReadyMessage waits until the readiness condition's message holds sub.
func (e *env) waitReadyMessage(name, sub string) {
	e.t.Helper()
	e.eventually("readiness message of "+name, 20*time.Second, func() (bool, string) {
		nq, err := e.getNQ(name)
		if err != nil {
			return false, err.Error()
		}
		c := meta.FindStatusCondition(nq.Status.Conditions, readyTrue.typ)
		return c != nil && strings.Contains(c.Message, sub), fmt.Sprintf("%+v", c)
	})
}

// appliedWithin is how soon after its switch (and port) appear an object
// that waited for them must have its rows: far below the retry backoff
// the tests let grow first (>= 5.12s).
const appliedWithin = 2 * time.Second

// Objects applied before their localnet switch exists are Ready=False/
// Failed with status.status "not correctly applied"; creating the switch
// alone (no Kubernetes event, backoff grown past 5s) brings the rows of
// every object waiting for it within appliedWithin (Ready=False/
// PortsPending, still "not correctly applied"); the pod's port then makes
// them Ready=True and "applied".
func TestSwitchAppearsLaterConverges(t *testing.T) {
	e := newEnv(t)
	e.nb.MustNBCtl("ls-del", e.switchName()) // newEnv made it; nothing references it yet
	c := e.start("")
	e.createNAD(nadName, e.net, "")
	e.createPod("vm1", "node-a", nadName, map[string]string{"tier": "gold"})
	// Two objects wait for the same switch: its appearance requeues both.
	names := []string{"gold", "silver"}
	e.createNQ(e.nqos("gold", 50, map[string]string{"tier": "gold"}, []string{e.net}, ruleSpec{dscp: 46}))
	e.createNQ(e.nqos("silver", 40, map[string]string{"tier": "gold"}, []string{e.net}, ruleSpec{dscp: 10}))
	for _, name := range names {
		nq := e.waitConditions(name, acceptedTrue, cond{readyTrue.typ, "False", reasonFailed})
		if c := meta.FindStatusCondition(nq.Status.Conditions, readyTrue.typ); !strings.Contains(c.Message, e.switchName()) {
			t.Errorf("%s: Failed message %q does not name the missing switch %s", name, c.Message, e.switchName())
		}
		e.waitAggregate(name, statusNotApplied)
	}
	// 11 requeues: the next backoff step is 5ms*2^10 = 5.12s.
	e.eventually("backoff to grow", 30*time.Second, func() (bool, string) {
		var counts []int
		for _, name := range names {
			counts = append(counts, c.queue.NumRequeues(e.ns+"/"+name))
		}
		return slices.Min(counts) >= 11, fmt.Sprintf("requeues %v", counts)
	})
	if d := e.ownedRows(); len(d.QoS)+len(d.PortGroups)+len(d.AddressSets) > 0 {
		t.Fatalf("rows written while the switch is missing: %+v", d)
	}
	// The switch alone: the pod's port is still missing, so only the
	// switch callback can requeue the object (the port callback could
	// otherwise requeue it too, it waits for both).
	added := time.Now()
	e.nb.MustNBCtl("ls-add", e.switchName())
	e.eventually("QoS rows and empty port groups after ls-add", appliedWithin, func() (bool, string) {
		rows := e.ownedRows()
		empty := 0
		for _, pg := range rows.PortGroups {
			if len(pg.Ports) == 0 {
				empty++
			}
		}
		// Each object's rule row and its bridging row for the missing port.
		return empty == len(names) && len(rows.QoS) == 2*len(names), fmt.Sprintf("%d empty port groups, %d QoS rows", empty, len(rows.QoS))
	})
	t.Logf("ls-add to rows of %d objects applied: %v", len(names), time.Since(added))
	lsp := e.lsp(nadName, "vm1")
	for _, name := range names {
		e.waitConditions(name, acceptedTrue, cond{readyTrue.typ, "False", reasonPortsPending})
		e.waitAggregate(name, statusNotApplied)
	}

	e.addPorts(lsp)
	for _, name := range names {
		e.waitMembers(name, lsp)
		e.waitConditions(name, acceptedTrue, readyTrue)
		e.waitAggregate(name, statusApplied)
	}
	e.waitRowsMatchCompiler("")
	if !e.ownsStatusField("gold", "nqos-global") {
		t.Error("field manager nqos-global does not own status.status")
	}
}

// pending maps a row name to every key waiting for it, and set replaces
// (or with nil clears) what one key waits for.
func TestPendingWaiters(t *testing.T) {
	p := newPending()
	p.set("ns/b", []string{"sw1", "sw2"})
	p.set("ns/a", []string{"sw1"})
	steps := []struct {
		name string
		do   func()
		want map[string][]string
	}{
		{"two keys wait for sw1", func() {}, map[string][]string{"sw1": {"ns/a", "ns/b"}, "sw2": {"ns/b"}, "sw3": {}}},
		{"b moves to sw3", func() { p.set("ns/b", []string{"sw3"}) }, map[string][]string{"sw1": {"ns/a"}, "sw2": {}, "sw3": {"ns/b"}}},
		{"a cleared", func() { p.set("ns/a", nil) }, map[string][]string{"sw1": {}, "sw3": {"ns/b"}}},
	}
	for _, st := range steps {
		st.do()
		for name, want := range st.want {
			if got := p.waiting(name); !slices.Equal(got, want) {
				t.Errorf("%s: waiting(%s) = %v, want %v", st.name, name, got, want)
			}
		}
	}
	if len(p.byName) != 1 || len(p.byKey) != 1 {
		t.Errorf("index not pruned: byName %v, byKey %v", p.byName, p.byKey)
	}
}
