package controller

import (
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

// newOKEPEnv starts a controller with the worked example's two ports,
// creates its objects and waits until the NB holds their compiled rows.
func newOKEPEnv(t *testing.T) *env {
	e := newEnv(t)
	e.addPorts(e.lsp(nadName, "virt-launcher-payments"), e.lsp(nadName, "virt-launcher-staging"))
	e.start("")
	e.okepObjects()
	e.waitRowsMatchCompiler("")
	return e
}

func TestOKEPWorkedExample(t *testing.T) {
	e := newOKEPEnv(t)
	for _, name := range []string{"tier-production", "tier-staging", "backup-deprioritization"} {
		e.waitConditions(name, acceptedTrue, readyTrue)
	}
	// The compiler is the oracle above; the literal OKEP table below is
	// not, so a mutated compiler fails here too.
	e.checkOKEPTable()
	rows := e.ownedRows()
	if v := danglingRefs(rows); len(v) > 0 {
		t.Errorf("dangling references: %v", v)
	}
	for _, q := range rows.QoS {
		if q.Switch == "" {
			t.Errorf("QoS %s is on no logical switch", q.ExternalIDs[qos.PrimaryIDKey])
		}
	}
}
