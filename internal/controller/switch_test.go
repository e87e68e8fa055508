package controller

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/nqos/nqos/api/v1alpha1"
	"github.com/nqos/nqos/internal/ovnnb/nbtest"
	"github.com/nqos/nqos/internal/qos"
)

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
