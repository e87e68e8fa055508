package controller

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/nqos/nqos/api/v1alpha1"
	"github.com/nqos/nqos/internal/ovnnb/nbtest"
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

// Two zone controllers, each with its own NB, write their own Ready
// condition under their own field manager; neither writes or owns
// status.status, so they cannot fight over it.
func TestZoneControllersLeaveAggregateAlone(t *testing.T) {
	e := newEnv(t)
	vms := []vm{{"vm-a", "node-a", "gold"}, {"vm-b", "node-b", "gold"}}
	e.withVMs("node-a", vms...)
	nbB := nbtest.Start(t)
	nbB.MustNBCtl("ls-add", e.switchName())
	for _, v := range vms {
		nbB.MustNBCtl("lsp-add", e.switchName(), e.lsp(nadName, v.name))
	}
	e.startOn(nbB, "node-b")
	e.createNQ(e.nqos("gold", 50, map[string]string{"tier": "gold"}, []string{e.net}, ruleSpec{dscp: 46}))
	nq := e.waitConditions("gold", acceptedTrue,
		cond{qos.ReadyConditionPrefix + "node-a", "True", reasonSuccess},
		cond{qos.ReadyConditionPrefix + "node-b", "True", reasonSuccess})
	if nq.Status.Status != "" {
		t.Errorf("status.status = %q with zone controllers only, want empty", nq.Status.Status)
	}
	for _, m := range []string{"nqos-node-a", "nqos-node-b"} {
		if e.ownsStatusField("gold", m) {
			t.Errorf("zone field manager %s owns status.status", m)
		}
	}
}

func TestAggregate(t *testing.T) {
	accepted := qos.Condition{Type: qos.ConditionAccepted, Status: conditionTrue}
	rejected := qos.Condition{Type: qos.ConditionAccepted, Status: conditionFalse}
	ready := func(zone, status string) qos.Condition {
		return qos.Condition{Type: NQOSReadyType(zone), Status: status}
	}
	for _, tc := range []struct {
		name, node string
		ovnkube    bool
		conds      []qos.Condition
		want       string
	}{
		{"accepted and ready", "", false, []qos.Condition{accepted, ready("global", conditionTrue)}, statusApplied},
		{"ready false", "", false, []qos.Condition{accepted, ready("global", conditionFalse)}, statusNotApplied},
		{"not accepted", "", false, []qos.Condition{rejected, ready("global", conditionFalse)}, statusNotApplied},
		{"other zone ready only", "", false, []qos.Condition{accepted, ready("node-a", conditionTrue)}, statusNotApplied},
		{"no ready condition", "", false, []qos.Condition{accepted}, statusNotApplied},
		{"zone controller writes none", "node-a", false, []qos.Condition{accepted, ready("node-a", conditionTrue)}, ""},
		{"none while ovnkube's NetworkQoS runs", "", true, []qos.Condition{accepted, ready("global", conditionTrue)}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := &Controller{node: tc.node, zone: zoneName(tc.node), ovnkube: tc.ovnkube}
			if got := c.aggregate(tc.conds); got != tc.want {
				t.Errorf("aggregate = %q, want %q", got, tc.want)
			}
		})
	}
}

// waitAggregate waits until status.status of name is want.
func (e *env) waitAggregate(name, want string) {
	e.t.Helper()
	e.eventually(fmt.Sprintf("status.status of %s = %q", name, want), 20*time.Second, func() (bool, string) {
		nq, err := e.getNQ(name)
		if err != nil {
			return false, err.Error()
		}
		return nq.Status.Status == want, fmt.Sprintf("status.status %q", nq.Status.Status)
	})
}

// ownsStatusField reports whether manager owns status.status of name
// through the status subresource.
func (e *env) ownsStatusField(name, manager string) bool {
	e.t.Helper()
	u, err := e.dyn.Resource(v1alpha1.GroupVersionResource()).Namespace(e.ns).Get(e.ctx, name, metav1.GetOptions{})
	must(e, err)
	for _, mf := range u.GetManagedFields() {
		if mf.Manager != manager || mf.Subresource != "status" || mf.FieldsV1 == nil {
			continue
		}
		var fields map[string]map[string]json.RawMessage
		must(e, json.Unmarshal(mf.FieldsV1.Raw, &fields))
		if _, ok := fields["f:status"]["f:status"]; ok {
			return true
		}
	}
	return false
}
