package controller

import (
	"errors"
	"testing"
	"time"

	"github.com/nqos/nqos/internal/ovnnb"
	"github.com/nqos/nqos/internal/qos"
)

// TestStartupNotReadyWhileNBDown: the NB ovsdb-server stops after the
// controller's client connected and before the controller starts. The
// startup garbage collection cannot read the NB, so the controller stays
// not ready, NotReady naming the cause (the NB cache cannot be trusted), and
// the orphan's rows are not reported collected; once the server is back
// the retried startup succeeds, the orphan is gone and the controller is
// ready.
func TestStartupNotReadyWhileNBDown(t *testing.T) {
	e := newEnv(t)
	e.addPorts(e.lsp(nadName, "vm1"))
	e.createNAD(nadName, e.net, "")
	e.createPod("vm1", "node-a", nadName, map[string]string{"tier": "gold"})
	ghost := e.nqos("ghost", 60, map[string]string{"tier": "gold"}, []string{e.net}, ruleSpec{dscp: 10})
	r := qos.CompileObject(ghost, qos.NewSnapshot(e.clusterInput("")), "")
	if r.Err != nil || len(r.QoS) == 0 {
		t.Fatalf("compile ghost: %v (%d rows)", r.Err, len(r.QoS))
	}
	ghostKey := ovnnb.Key{Namespace: e.ns, Name: "ghost"}
	if _, err := e.nbc.Apply(e.ctx, ghostKey, ovnnb.ObjectRows{PortGroups: r.PortGroups, QoS: r.QoS}); err != nil {
		t.Fatalf("seed orphan rows: %v", err)
	}
	ctrlNB := e.dial()
	e.eventually("orphan rows in the controller's cache", 5*time.Second, func() (bool, string) {
		keys, err := ctrlNB.OwnedKeys(e.ctx)
		return err == nil && len(keys) == 1, "waiting"
	})

	e.nb.Stop()
	run := e.launch(ctrlNB, "")
	var cause error
	e.eventually("startup to fail on the stopped NB", 20*time.Second, func() (bool, string) {
		cause = run.c.NotReady()
		return errors.Is(cause, ovnnb.ErrStaleCache), "NotReady = " + errString(cause)
	})
	t.Logf("not ready while the NB is down: %v", cause)
	if run.c.Ready() {
		t.Fatal("Ready() is true while NotReady names an error")
	}

	e.nb.Restart()
	e.eventually("controller ready after the NB restart", 30*time.Second, func() (bool, string) {
		err := run.c.NotReady()
		return err == nil, "NotReady = " + errString(err)
	})
	for _, q := range e.rawQoS() {
		if q.ExternalIDs[qos.ObjectNameKey] == e.ns+":ghost" {
			t.Errorf("orphan QoS row survived the retried startup: %+v", q)
		}
	}
}

func errString(err error) string {
	if err == nil {
		return "<nil>"
	}
	return err.Error()
}
