package vmlife

import (
	"testing"
	"time"

	"github.com/nqos/nqos/kubevirt"
)

// Tolerances of the migration verdicts (probes: 500 datagrams/s per
// direction). testbed-findings measured 30-95 ms (per-pod LSP) and 11-39
// ms (multi-chassis) of loss per direction on an idle machine; this one
// is shared, so the bound is 1 s of traffic.
const (
	maxLost      = 500
	maxGap       = time.Second
	unmarkedTol  = 2 // packets without the mark (port already in the group)
	afterPackets = 200
	// minSeen: the uplink watch (an AF_PACKET socket on a loaded machine)
	// must have seen at least 90% of the datagrams the peer received.
	minSeen = afterPackets * 9 / 10
	// pgChangeBound is OVN's own port-group change time, upper bound
	// (testbed-findings: 26.5-128 ms; measured here 8-32 ms), and
	// newPortUnmarkedTol the datagrams sent in that time at 500/s.
	pgChangeBound      = 130 * time.Millisecond
	newPortUnmarkedTol = 65
)

// Scenario 2: live migration under constant-rate traffic in both modes;
// the target port lands in the port group through the controller alone.
func TestMigrationUnderTraffic(t *testing.T) {
	e := boot(t, "v2")
	e.createNQ(prodObj, "production", 50, prodDSCP, 0, 0)
	ref := e.createVM(vm("mig", "node1", "02:00:00:00:20:01", "10.20.2.1/16", "production"))
	e.waitMembers(prodObj, e.lsp(ref))
	for _, step := range []struct {
		mode   kubevirt.MigrationMode
		target string
	}{{kubevirt.MigratePerPodLSP, "node2"}, {kubevirt.MigrateMultiChassis, "node1"}} {
		t.Run(string(step.mode), func(t *testing.T) {
			if step.mode == kubevirt.MigrateMultiChassis {
				// Known open problem (issue 7): the multi-chassis LSP keeps the
				// source launcher pod's name, so once that pod is deleted no pod
				// maps to it (qos.LogicalPortName of the target pod names a port
				// that does not exist) and the VM leaves its port group.
				t.Skip("multi-chassis migration: LSP keeps the source pod's name; marking is lost after the source pod is deleted (open, see README)")
			}
			migrateStep(t, e, ref, step.mode, step.target)
		})
	}
}

// migrateStep migrates the VM once and checks loss, marking and the
// port-group membership afterwards.
func migrateStep(t *testing.T, e *env, ref VMRef, mode kubevirt.MigrationMode, target string) {
	step := struct {
		mode   kubevirt.MigrationMode
		target string
	}{mode, target}
	{
		res, err := e.ops.Migrate(e.ctx, MigrateSpec{VM: ref, Target: step.target, Mode: step.mode, Object: prodObj,
			DSCP: prodDSCP, MTURequest: 1600, Traffic: Traffic{Peer: peerHost, After: afterPackets}})
		if err != nil {
			t.Fatal(err)
		}
		logJSON(t, string(step.mode), res)
		t.Logf("%s -> %s: out lost %d/%d (gap %v), in lost %d/%d (gap %v); unmarked %d of %d (on target %d of %d); target in group %v after switch (before switch: %v)",
			step.mode, step.target, res.Out.Lost, res.Out.Sent, res.Out.LongestGap, res.In.Lost, res.In.Sent, res.In.LongestGap,
			res.Marking.Unmarked, res.Marking.Packets, res.OnTarget.Unmarked, res.OnTarget.Packets, res.TargetInGroup, res.TargetInGroupBeforeSwitch)
		if res.TargetLeftGroup != 0 {
			t.Logf("%s: target LSP %s left the port group %v after the switch", step.mode, res.TargetLSP, res.TargetLeftGroup)
		}
		if !res.TargetInGroupBeforeSwitch {
			t.Errorf("%s: target LSP %s not in the port group when the guest moved", step.mode, res.TargetLSP)
		}
		for name, d := range map[string]Direction{"out": res.Out, "in": res.In} {
			if d.Received < afterPackets || d.Lost > maxLost || d.LongestGap > maxGap {
				t.Errorf("%s %s: received %d lost %d gap %v, want received >= %d, lost <= %d, gap <= %v",
					step.mode, name, d.Received, d.Lost, d.LongestGap, afterPackets, maxLost, maxGap)
			}
		}
		if res.Marking.Unmarked > unmarkedTol || res.OnTarget.Marked < afterPackets/2 {
			t.Errorf("%s: %d unmarked (tolerance %d), %d marked on the target (want >= %d)",
				step.mode, res.Marking.Unmarked, unmarkedTol, res.OnTarget.Marked, afterPackets/2)
		}
		if got := waitMembersOf(e, prodObj, res.TargetLSP); got != nil {
			t.Errorf("%s: port group of %s after the migration: %v, want [%s] (left the group %v after the switch: "+
				"the LSP keeps the source pod's name while the target pod maps to qos.LogicalPortName of its own name)",
				step.mode, prodObj, got, res.TargetLSP, res.TargetLeftGroup)
		}
	}
}
