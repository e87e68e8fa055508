package vmlife

import (
	"testing"
	"time"

	"github.com/nqos/nqos/kubevirt"
)

// controllerMargin is what the controller may add on top of OVN's own
// port-group change time (median of the baseline) between a port's first
// packet on the uplink and its first marked packet.
const controllerMargin = 300 * time.Millisecond

// Scenario 1: a VM created after its policy, and a VM migrated in after
// its policy (target LSP created after the switch), are marked with no
// user action; the delay the controller adds is compared with OVN's own
// port-group change time measured in the same run.
func TestVMAppearsAfterPolicy(t *testing.T) {
	e := boot(t, "v1")
	e.createNQ(prodObj, "production", 50, prodDSCP, 0, 0)
	ref := e.createVM(vm("ref", "node1", "02:00:00:00:10:01", "10.20.1.10/16", "none"))

	base, err := e.ops.PortGroupBaseline(e.ctx, BaselineSpec{VM: ref, DSCP: 18, Samples: 3, Traffic: Traffic{Peer: peerHost}})
	if err != nil {
		t.Fatal(err)
	}
	logJSON(t, "OVN port-group baseline", base)
	t.Logf("OVN pg-set-ports -> first marked: median %v (min %v, max %v); clear -> first unmarked: median %v",
		base.Add.Median, base.Add.Min, base.Add.Max, base.Remove.Median)
	if base.Add.Min <= 0 || base.Add.Max > 2*time.Second {
		t.Errorf("baseline add %v: want within (0, 2s]", base.Add.Samples)
	}

	late := vm("late", "node1", "02:00:00:00:10:02", "10.20.1.11/16", "production")
	app, err := e.ops.VMAppears(e.ctx, AppearSpec{VM: late, Object: prodObj, DSCP: prodDSCP, Traffic: Traffic{Peer: peerHost}})
	if err != nil {
		t.Fatal(err)
	}
	logJSON(t, "VM created after policy", app)
	t.Logf("created: LSP in NB %v, in port group %v, port up %v, first packet %v, first marked %v after lsp-add; %d unmarked before",
		app.LSPInNB, app.InGroup, app.PortUp, app.FirstPacket, app.FirstMarked, app.Marking.Unmarked)
	checkAdded(t, "created", app.FirstPacket, app.FirstMarked, base)
	if !app.Marking.LastUnmarked.IsZero() && app.Marking.LastUnmarked.After(app.Marking.FirstMarked) {
		t.Errorf("created: unmarked packet at %v after the first marked one at %v", app.Marking.LastUnmarked, app.Marking.FirstMarked)
	}
	if app.InGroup < app.LSPInNB-memberSample || app.InGroup-app.LSPInNB > controllerMargin {
		t.Errorf("created: port group took the LSP %v after it appeared in the NB, want within [0, %v]", app.InGroup-app.LSPInNB, controllerMargin)
	}

	mig, err := e.ops.Migrate(e.ctx, MigrateSpec{VM: VMRef{late.Namespace, late.Name}, Target: "node2", Mode: kubevirt.MigratePerPodLSP,
		LateTargetLSP: true, Object: prodObj, DSCP: prodDSCP, Traffic: Traffic{Peer: peerHost}})
	if err != nil {
		t.Fatal(err)
	}
	logJSON(t, "VM migrated in after policy", mig)
	t.Logf("migrated in: target LSP in NB %v, in group %v, first packet %v, first marked %v after the switch (LSP -> marked %v); unmarked on target %d",
		mig.TargetLSPInNB, mig.TargetInGroup, mig.FirstPacketOnTarget, mig.FirstMarkedOnTarget, mig.LSPToMarked, mig.OnTarget.Unmarked)
	checkAdded(t, "migrated in", mig.FirstPacketOnTarget, mig.FirstMarkedOnTarget, base)
	if mig.TargetLSPInNB <= 0 {
		t.Errorf("migrated in: target LSP appeared %v relative to the switch, want after it (late LSP)", mig.TargetLSPInNB)
	}
	if mig.LSPToMarked <= 0 || mig.LSPToMarked > 5*time.Second {
		t.Errorf("migrated in: LSP -> first marked %v, want within (0, 5s]", mig.LSPToMarked)
	}
}

// checkAdded: marking starts after the port's first packet by no more
// than OVN's own port-group change time plus controllerMargin.
func checkAdded(t *testing.T, what string, firstPacket, firstMarked time.Duration, base BaselineResult) {
	t.Helper()
	added := firstMarked - firstPacket
	limit := base.Add.Median + controllerMargin
	t.Logf("%s: controller adds %v to the port's first packet (limit: OVN median %v + margin %v = %v)", what, added, base.Add.Median, controllerMargin, limit)
	if firstPacket <= 0 || added < 0 || added > limit {
		t.Errorf("%s: first packet %v, first marked %v: marking delay %v, want within [0, %v]", what, firstPacket, firstMarked, added, limit)
	}
}
