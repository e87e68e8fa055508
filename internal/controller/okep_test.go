package controller

import (
	"strings"
	"testing"

	"github.com/nqos/nqos/internal/qos"
)

const nadName = "tenant-blue"

var (
	acceptedTrue = cond{qos.ConditionAccepted, "True", qos.ReasonConfigurationAccepted}
	readyTrue    = cond{qos.ReadyConditionPrefix + "global", "True", reasonSuccess}
)

// okepObjects creates the OKEP-6815 worked example: an ipamless localnet
// NAD, a payments VM (app=payments, tier=production), a staging VM, the
// two tier objects and the backup-deprioritization object.
func (e *env) okepObjects() {
	e.createNAD(nadName, e.net, "")
	e.createPod("virt-launcher-payments", "node-a", nadName, map[string]string{"app": "payments", "tier": "production"})
	e.createPod("virt-launcher-staging", "node-b", nadName, map[string]string{"tier": "staging"})
	nets := []string{e.net}
	e.createNQ(e.nqos("tier-production", 60, map[string]string{"tier": "production"}, nets, ruleSpec{dscp: 46}))
	e.createNQ(e.nqos("tier-staging", 40, map[string]string{"tier": "staging"}, nets, ruleSpec{dscp: 10}))
	e.createNQ(e.nqos("backup-deprioritization", 70, map[string]string{"app": "payments"}, nets,
		ruleSpec{dscp: 46},
		ruleSpec{dscp: 8, rate: 100000, burst: 5000, cidrs: []string{"10.20.0.0/16"}, tcpPort: 2049}))
}

func TestOKEPWorkedExample(t *testing.T) {
	e := newEnv(t)
	e.addPorts(e.lsp(nadName, "virt-launcher-payments"), e.lsp(nadName, "virt-launcher-staging"))
	e.start("")
	e.okepObjects()

	want := e.waitRowsMatchCompiler("")
	for _, name := range []string{"tier-production", "tier-staging", "backup-deprioritization"} {
		e.waitConditions(name, acceptedTrue, readyTrue)
	}
	// The compiler output itself has the OKEP's shape: 4 rows with the
	// OKEP priorities, all matching on a port group.
	prios := map[int]string{}
	for _, q := range want.QoS {
		prios[q.Priority] = q.Match
		if !strings.HasPrefix(q.Match, "inport == @") {
			t.Errorf("QoS row %d match %q does not start with a port-group source", q.Priority, q.Match)
		}
	}
	for _, p := range []int{10400, 10600, 10700, 10701} {
		if _, ok := prios[p]; !ok {
			t.Errorf("no QoS row with OVN priority %d; rows %v", p, prios)
		}
	}
	if len(want.QoS) != 4 || len(want.PortGroups) != 3 {
		t.Errorf("want 4 QoS rows and 3 port groups, got %d and %d", len(want.QoS), len(want.PortGroups))
	}
	if v := e.nbc.Audit(); len(v) > 0 {
		t.Errorf("NB audit violations: %+v", v)
	}
}
