package controller

import (
	"fmt"
	"hash/fnv"
	"regexp"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/nqos/nqos/internal/ovnnb"
	"github.com/nqos/nqos/internal/ovnnb/nbtest"
	"github.com/nqos/nqos/internal/qos"
)

// refPattern finds @portgroup and $addressset references in a match.
var refPattern = regexp.MustCompile(`[@$]([A-Za-z0-9_.]+)`)

// danglingRefs lists QoS rows of d referencing a missing group or set.
func danglingRefs(d qos.Desired) []string {
	pgs, ases := map[string]bool{}, map[string]bool{}
	for _, pg := range d.PortGroups {
		pgs[pg.Name] = true
	}
	for _, as := range d.AddressSets {
		ases[as.Name] = true
	}
	var out []string
	for _, q := range d.QoS {
		for _, m := range refPattern.FindAllStringSubmatch(q.Match, -1) {
			if (m[0][0] == '@' && !pgs[m[1]]) || (m[0][0] == '$' && !ases[m[1]]) {
				out = append(out, fmt.Sprintf("%s references missing %s", q.ExternalIDs[qos.PrimaryIDKey], m[0]))
			}
		}
	}
	return out
}

// watchNB monitors the NB over raw OVSDB JSON-RPC until stop, which
// fails the test on any transaction-level state where a QoS row
// referenced a missing port group or address set.
func (e *env) watchNB() (stop func()) {
	m := startNBMonitor(e.t, e.nb.Addr())
	return func() {
		e.t.Helper()
		m.waitCaughtUp(e.t, e.nb)
		v, n := m.result()
		e.t.Logf("NB monitor checked %d transactions", n)
		if len(v) > 0 {
			e.t.Fatalf("NB monitor saw %d violations, first: %s", len(v), v[0])
		}
	}
}

// waitNoOwnedRows waits until the test namespace owns no NB row.
func (e *env) waitNoOwnedRows() {
	e.t.Helper()
	e.eventually("no owned NB rows", 20*time.Second, func() (bool, string) {
		d := e.ownedRows()
		n := len(d.QoS) + len(d.PortGroups) + len(d.AddressSets)
		return n == 0, fmt.Sprintf("%d rows left", n)
	})
}

// rawQoS lists the QoS table through ovn-nbctl, bypassing every cache.
func (e *env) rawQoS() []nbtest.QoS {
	e.t.Helper()
	raw, err := e.nb.ListQoS()
	must(e, err)
	return raw
}

func TestDeletionOrderNeverDangles(t *testing.T) {
	e := newEnv(t)
	e.addPorts(e.lsp(nadName, "virt-launcher-payments"), e.lsp(nadName, "virt-launcher-staging"))
	e.start("")
	stop := e.watchNB()
	e.okepObjects()
	e.waitRowsMatchCompiler("")
	for _, name := range []string{"tier-production", "tier-staging", "backup-deprioritization"} {
		e.deleteNQ(name)
	}
	e.waitNoOwnedRows()
	stop()
	if raw := e.rawQoS(); len(raw) != 0 {
		t.Errorf("QoS table not empty after deletion: %+v", raw)
	}
}

// Rows owned by a NetworkQoS that does not exist are collected at startup
// (QoS rows before their port group); rows of existing objects stay.
func TestStartupGarbageCollectsOrphans(t *testing.T) {
	e := newEnv(t)
	e.addPorts(e.lsp(nadName, "vm1"))
	e.createNAD(nadName, e.net, "")
	e.createPod("vm1", "node-a", nadName, map[string]string{"tier": "gold"})
	e.createNQ(e.nqos("kept", 50, map[string]string{"tier": "gold"}, []string{e.net}, ruleSpec{dscp: 46}))
	ghost := e.nqos("ghost", 60, map[string]string{"tier": "gold"}, []string{e.net}, ruleSpec{dscp: 10, cidrs: []string{"10.9.0.0/16"}})
	in := e.clusterInput("")
	r := qos.CompileObject(ghost, qos.NewSnapshot(in), "")
	if r.Err != nil || len(r.QoS) == 0 {
		t.Fatalf("compile ghost: %v (%d rows)", r.Err, len(r.QoS))
	}
	if _, err := e.nbc.Apply(e.ctx, ovnnb.Key{Namespace: e.ns, Name: "ghost"}, ovnnb.ObjectRows{PortGroups: r.PortGroups, AddressSets: r.AddressSets, QoS: r.QoS}); err != nil {
		t.Fatalf("seed orphan rows: %v", err)
	}
	e.eventually("orphan rows seeded", 5*time.Second, func() (bool, string) {
		return len(e.ownedRows().QoS) == 1, "waiting for the test client's cache"
	})

	stop := e.watchNB()
	e.start("")
	// Startup GC is done once Synced; the raw NB must already be clean.
	for _, q := range e.rawQoS() {
		if q.ExternalIDs[qos.ObjectNameKey] == e.ns+":ghost" {
			t.Errorf("orphan QoS row survived startup: %+v", q)
		}
	}
	d := e.waitRowsMatchCompiler("")
	if len(d.QoS) != 1 || d.QoS[0].ExternalIDs[qos.ObjectNameKey] != e.ns+":kept" {
		t.Errorf("want only the kept object's row, got %+v", d.QoS)
	}
	stop() // the GC's teardown never left a QoS row without its port group
}

func hashForOVN(s string) string {
	h := fnv.New64a()
	h.Write([]byte(s))
	return fmt.Sprintf("a%d", h.Sum64())
}

// A pre-seeded legacy row (source = address set) is migrated at startup:
// port group created and populated, match rewritten with the destination
// unchanged, actions unchanged, legacy address set deleted.
func TestLegacyMigration(t *testing.T) {
	e := newEnv(t)
	port := e.lsp(nadName, "vm1")
	e.addPorts(port)
	e.createNAD(nadName, e.net, "")
	e.createPod("vm1", "node-a", nadName, map[string]string{"tier": "gold"})
	e.createNQ(e.nqos("legacy", 50, map[string]string{"tier": "gold"}, []string{e.net},
		ruleSpec{dscp: 8, rate: 100000, cidrs: []string{"10.20.0.0/16"}}))

	ctrlName := qos.OVNKubeControllerName(e.net) // the upstream generation's key
	owner := func(id string) []string {
		return []string{
			"external_ids:" + qos.OwnerControllerKey + "=" + ctrlName,
			"external_ids:" + qos.OwnerTypeKey + "=" + qos.OwnerType,
			"external_ids:" + qos.ObjectNameKey + "=" + e.ns + ":legacy",
			"external_ids:" + qos.PrimaryIDKey + "=" + id,
			"external_ids:" + qos.NetworkKey + "=" + e.net,
		}
	}
	asID := ctrlName + ":NetworkQoS:" + e.ns + ":legacy:src:0:v4"
	asName := hashForOVN(asID)
	e.nb.MustNBCtl(append([]string{"create", "Address_Set", "name=" + asName, `addresses="10.0.0.5"`,
		"external_ids:rule-index=src", "external_ids:ip-block-index=0", "external_ids:ip-family=v4"}, owner(asID)...)...)
	dest := "ip4.dst == 10.20.0.0/16"
	qosArgs := append([]string{"--", "--id=@q", "create", "QoS", "priority=10500", "direction=to-lport",
		fmt.Sprintf(`match="ip4.src == {$%s} && %s"`, asName, dest), "action:dscp=8", "bandwidth:rate=100000",
		"external_ids:rule-index=0"}, owner(ctrlName+":NetworkQoS:"+e.ns+":legacy:0")...)
	qosArgs = append(qosArgs, "--", "add", "Logical_Switch", e.switchName(), "qos_rules", "@q")
	uuid := strings.TrimSpace(e.nb.MustNBCtl(qosArgs...))

	stop := e.watchNB()
	e.start("")
	e.waitRowsMatchCompiler("")
	stop()
	raw := e.rawQoS()
	if len(raw) != 1 {
		t.Fatalf("want exactly the one migrated QoS row, got %+v", raw)
	}
	q := raw[0]
	pg, ok := e.portGroupOf("legacy")
	if !ok || len(pg.Ports) != 1 || pg.Ports[0] != port {
		t.Fatalf("port group not created/populated: %+v", pg)
	}
	wantMatch := "inport == @" + pg.Name + " && " + dest
	if q.UUID != uuid || q.Match != wantMatch || q.Action["dscp"] != 8 || q.Bandwidth["rate"] != 100000 || q.Priority != 10500 {
		t.Errorf("migrated row = %+v; want uuid %s, match %q, dscp 8, rate 100000, priority 10500", q, uuid, wantMatch)
	}
	sets, err := e.nb.ListAddressSets()
	must(e, err)
	for _, as := range sets {
		if as.Name == asName {
			t.Errorf("legacy source address set %s not deleted", asName)
		}
	}
	// Idempotent: a second controller start changes nothing.
	e.stop()
	e.start("")
	again := e.rawQoS()
	if len(again) != 1 || again[0].UUID != uuid || again[0].Match != wantMatch {
		t.Errorf("second start changed the row: %+v", again)
	}
}

// Stopping the controller, changing objects and starting again converges
// without duplicate rows.
func TestRestartConvergesWithoutDuplicates(t *testing.T) {
	e := newOKEPEnv(t)
	e.stop()

	e.deleteNQ("tier-staging")
	e.updateEgress("backup-deprioritization", ruleSpec{dscp: 10})
	e.labelPod("virt-launcher-staging", map[string]string{"tier": "production"})

	e.start("")
	want := e.waitRowsMatchCompiler("")
	raw := e.rawQoS()
	ids := map[string]int{}
	for _, q := range raw {
		ids[q.ExternalIDs[qos.PrimaryIDKey]]++
	}
	for id, n := range ids {
		if n > 1 {
			t.Errorf("QoS id %s appears %d times", id, n)
		}
	}
	if len(raw) != len(want.QoS) {
		t.Errorf("NB has %d QoS rows, compiler wants %d", len(raw), len(want.QoS))
	}
	pgs, err := e.nb.ListPortGroups()
	must(e, err)
	if len(pgs) != len(want.PortGroups) {
		t.Errorf("NB has %d port groups, compiler wants %d", len(pgs), len(want.PortGroups))
	}
	e.waitConditions("backup-deprioritization", acceptedTrue, readyTrue)
}

func TestCollisionWarningEvent(t *testing.T) {
	e := newEnv(t)
	e.goldVM()
	e.createNQ(e.nqos("first", 50, map[string]string{"tier": "gold"}, []string{e.net}, ruleSpec{dscp: 46}))
	e.createNQ(e.nqos("second", 50, nil, []string{e.net}, ruleSpec{dscp: 10}))
	e.eventually("PriorityCollision warnings on both objects", 20*time.Second, func() (bool, string) {
		evs, err := e.kube.CoreV1().Events(e.ns).List(e.ctx, metav1.ListOptions{})
		if err != nil {
			return false, err.Error()
		}
		got := map[string]bool{}
		for _, ev := range evs.Items {
			if ev.Reason == "PriorityCollision" && ev.Type == "Warning" && strings.Contains(ev.Message, "10500") {
				got[ev.InvolvedObject.Name] = true
			}
		}
		return got["first"] && got["second"], fmt.Sprintf("warned: %v", got)
	})
}

// With --node, only pods on that node are members and the condition is
// Ready-In-Zone-<node>.
func TestNodeScope(t *testing.T) {
	e := newEnv(t)
	e.withVMs("node-a", vm{"vm-a", "node-a", "gold"}, vm{"vm-b", "node-b", "gold"})
	e.createNQ(e.nqos("gold", 50, map[string]string{"tier": "gold"}, []string{e.net}, ruleSpec{dscp: 46}))
	e.waitMembers("gold", e.lsp(nadName, "vm-a"))
	e.waitRowsMatchCompiler("node-a")
	e.waitConditions("gold", acceptedTrue, cond{qos.ReadyConditionPrefix + "node-a", "True", reasonSuccess})
}
