package controller

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/nqos/nqos/internal/qos"
)

// waitWarningEvent waits for a Warning event with reason on object name
// whose message contains text.
func (e *env) waitWarningEvent(name, reason, text string) {
	e.t.Helper()
	e.eventually(fmt.Sprintf("Warning %s on %s", reason, name), 20*time.Second, func() (bool, string) {
		evs, err := e.kube.CoreV1().Events(e.ns).List(e.ctx, metav1.ListOptions{})
		if err != nil {
			return false, err.Error()
		}
		var seen []string
		for _, ev := range evs.Items {
			if ev.InvolvedObject.Name == name && ev.Type == "Warning" {
				seen = append(seen, ev.Reason+": "+ev.Message)
				if ev.Reason == reason && strings.Contains(ev.Message, text) {
					return true, ""
				}
			}
		}
		return false, fmt.Sprintf("events: %v", seen)
	})
}

// TestZeroRowsIsNotReady: an accepted object that selects no network
// compiles to no rows: NQOSReady-In-Zone-global is False/NoRows naming
// why, status.status is not "applied", and the warning is an event.
func TestZeroRowsIsNotReady(t *testing.T) {
	e := newEnv(t)
	e.goldVM()
	e.createNQ(e.nqos("nowhere", 50, map[string]string{"tier": "gold"}, []string{"no-such-network"}, ruleSpec{dscp: 46}))
	nq := e.waitConditions("nowhere", acceptedTrue, cond{NQOSReadyType("global"), conditionFalse, reasonNoRows},
		cond{OVNKReadyType("global"), conditionFalse, reasonNoRows})
	if c := meta.FindStatusCondition(nq.Status.Conditions, NQOSReadyType("global")); !strings.Contains(c.Message, "select no network") {
		t.Fatalf("NoRows message %q does not say why", c.Message)
	}
	e.waitAggregate("nowhere", statusNotApplied)
	e.waitWarningEvent("nowhere", string(qos.WarningNoNetwork), "select no network")
}

// TestWarningsReachTheObject: a compiler warning on an applied object is
// a Warning event with the warning's kind as reason and is listed in the
// readiness message (SuccessWithWarnings).
func TestWarningsReachTheObject(t *testing.T) {
	e := newEnv(t)
	e.goldVM()
	e.createNQ(e.nqos("masked", 50, map[string]string{"tier": "gold"}, []string{e.net}, ruleSpec{dscp: 46, cidrs: []string{"10.1.2.3/8"}}))
	nq := e.waitConditions("masked", acceptedTrue, cond{NQOSReadyType("global"), conditionTrue, reasonSuccessWithWarnings})
	if c := meta.FindStatusCondition(nq.Status.Conditions, NQOSReadyType("global")); !strings.Contains(c.Message, "10.1.2.3/8 has host bits set") {
		t.Fatalf("readiness message %q does not carry the warning", c.Message)
	}
	e.waitWarningEvent("masked", string(qos.WarningMaskedHostBits), "10.1.2.3/8")
}

// TestOVNKubeNetworkQoSOwnsItsConditions: with OVN-Kubernetes's
// NetworkQoS on, nqos writes Accepted and NQOSReady-In-Zone-global only,
// never Ready-In-Zone-global or status.status, and writes no rows on a
// network with IPAM (OutOfScope), while it still serves ipamless ones.
func TestOVNKubeNetworkQoSOwnsItsConditions(t *testing.T) {
	e := newEnv(t)
	port := e.lsp(nadName, "vm1")
	e.addPorts(port)
	nbc := e.dial()
	e.launchWith(Config{NB: nbc, OVNKubeNetworkQoS: true}, nbc.Close)
	e.createNAD(nadName, e.net, "")
	e.createNAD("ipam-nad", e.net+"-ipam", "10.50.0.0/24")
	e.createPod("vm1", "node-a", nadName, map[string]string{"tier": "gold"})
	e.createNQ(e.nqos("gold", 50, map[string]string{"tier": "gold"}, []string{e.net}, ruleSpec{dscp: 46}))
	e.createNQ(e.nqos("ipam", 51, map[string]string{"tier": "gold"}, []string{e.net + "-ipam"}, ruleSpec{dscp: 10}))
	gold := e.waitConditions("gold", acceptedTrue, cond{NQOSReadyType("global"), conditionTrue, reasonSuccess})
	ipam := e.waitConditions("ipam", acceptedTrue, cond{NQOSReadyType("global"), conditionFalse, reasonNoRows})
	for _, nq := range []string{"gold", "ipam"} {
		obj := gold
		if nq == "ipam" {
			obj = ipam
		}
		if c := meta.FindStatusCondition(obj.Status.Conditions, OVNKReadyType("global")); c != nil {
			t.Fatalf("%s: nqos wrote OVN-Kubernetes's condition %+v", nq, c)
		}
		if obj.Status.Status != "" || e.ownsStatusField(nq, "nqos-global") {
			t.Fatalf("%s: nqos wrote status.status %q", nq, obj.Status.Status)
		}
	}
	if c := meta.FindStatusCondition(ipam.Status.Conditions, NQOSReadyType("global")); !strings.Contains(c.Message, "OVN-Kubernetes's own NetworkQoS serves it") {
		t.Fatalf("ipam readiness message %q does not name the scope", c.Message)
	}
	rows := e.ownedRows()
	if len(rows.QoS) != 1 || rows.QoS[0].Switch != e.switchName() {
		t.Fatalf("owned QoS rows %+v, want only gold's on %s", rows.QoS, e.switchName())
	}
}
