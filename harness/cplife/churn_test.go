package cplife

import (
	"testing"
	"time"

	"github.com/nqos/nqos/internal/ovnnb"
)

// Scenario 8: VMs (launcher pods + LSPs) and NetworkQoS objects (some
// accepted, some rejected for a pod-selector destination on the ipamless
// network) are created, relabelled and deleted at a steady rate for 30 s
// while a watcher audits every committed NB state: no QoS row may
// reference a missing port group or address set and no confirmed
// rejected object may own a row (rule: Churner). At the end the NB
// equals the compiler's rows for the final objects.
func TestChurn(t *testing.T) {
	e := newEnv(t, "p4", nil)
	e.startController()
	spec := ChurnSpec{Namespace: vmNamespace, NAD: defaultNAD, NADLabels: blueLabels,
		Nodes: []string{e.node(0), e.node(1)}, Duration: 30 * time.Second, Interval: 300 * time.Millisecond,
		Seed: 8, DestCIDR: "10.20.0.0/24"}
	ch, err := NewChurner(e.cl, e.vms, spec)
	if err != nil {
		t.Fatal(err)
	}
	mon, err := StartNBMonitor(e.ctx, e.tb.NBAddress())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(mon.Close)
	w := e.nb.Watch(e.ctx, ovnnb.WatchOptions{Rejected: ch.Rejected})
	res, err := ch.Run(e.ctx)
	logJSON(t, "churn", res)
	if err != nil {
		t.Fatal(err)
	}
	final := e.converge("after churn")
	if final.QoSRows == 0 {
		t.Errorf("the final objects own no QoS row: the final comparison judged nothing")
	}
	noSightings(t, w)
	if err := mon.Sync(e.ctx); err != nil {
		t.Fatal(err)
	}
	changes := CountChanges(mon.Transactions(0))
	logJSON(t, "NB row changes during the churn", changes)
	// The watcher had something to judge: rows came and went.
	for _, k := range []string{"QoS insert", "QoS delete", "Port_Group insert", "Port_Group delete"} {
		if changes[k] == 0 {
			t.Errorf("no %s during the churn: %v", k, changes)
		}
	}
	// A steady rate: at least half the scheduled operations ran even on
	// a loaded machine, and every kind of change happened.
	if want := int(spec.Duration/spec.Interval) / 2; res.Ops < want {
		t.Errorf("%d operations in %v, want >= %d", res.Ops, res.Took, want)
	}
	for _, k := range []string{opVMCreate, opVMRelabel, opNQAccepted, opNQRejected} {
		if res.ByKind[k] == 0 {
			t.Errorf("no %s operation ran: %v", k, res.ByKind)
		}
	}
	if res.Rejections == 0 {
		t.Errorf("no rejection was confirmed: the Rejected check never applied")
	}
}
