package controller

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"

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
