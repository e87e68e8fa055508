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
