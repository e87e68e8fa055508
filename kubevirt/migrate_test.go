package kubevirt

import (
	"context"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/nqos/nqos/capture"
	"github.com/nqos/nqos/internal/poll"
	"github.com/nqos/nqos/topo/localnet"
)

// migrateAndMeasure migrates vm to target while UDP probes run in both
// directions between the guest and the backup server (500 packets/s
// each) and the target's uplink is watched; it records loss per
// direction and the time to the first marked packet on the target.
func migrateAndMeasure(t *testing.T, tb *localnet.Testbed, m *Manager, vm VM, target string, mode MigrationMode, late bool) {
	ctx := context.Background()
	backup, _ := tb.Host("backup")
	guest := m.Guest(vm)
	vmIP := netip.MustParseAddr("10.20.1.1")
	bIP := netip.MustParseAddr(backup.IPv4)
	up, err := localnet.StartProbe(ctx, guest, netip.AddrPortFrom(vmIP, 7001), backup.Netns, netip.AddrPortFrom(bIP, 7001), 2*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { up.Stop() })
	down, err := localnet.StartProbe(ctx, backup.Netns, netip.AddrPortFrom(bIP, 7002), guest, netip.AddrPortFrom(vmIP, 7002), 2*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { down.Stop() })
	waitReceived(t, up, 50)
	waitReceived(t, down, 50)
	w := watchUplink(t, tb, target)
	// The controller's job, done by hand: the target port joins the
	// source port group before the switch, or, when its LSP appears only
	// after the switch, as soon as it exists.
	joinPG := func(ctx context.Context, rep MigrationReport) error {
		if rep.TargetLSP == rep.SourceLSP {
			return nil
		}
		_, err := tb.NBCtl(ctx, "--", "--id=@lsp", "get", "Logical_Switch_Port", rep.TargetLSP, "--", "add", "Port_Group", qosPG, "ports", "@lsp")
		return err
	}
	before, _ := m.Get(vm.Namespace, vm.Name)
	rowUUID := lspUUID(t, tb, before.LSPs[0])
	opts := MigrateOptions{Mode: mode, LateTargetLSP: late, BeforeSwitch: joinPG}
	if late {
		opts.BeforeSwitch = nil
	}
	rep, err := m.Migrate(ctx, vm.Namespace, vm.Name, target, opts)
	if err != nil {
		t.Fatal(err)
	}
	if late {
		if err := joinPG(ctx, rep); err != nil {
			t.Fatal(err)
		}
	}
	waitReceived(t, up, up.Received()+100)
	waitReceived(t, down, down.Received()+100)
	ru, rd := up.Stop(), down.Stop()
	var first capture.Packet
	err = poll.Until(ctx, 10*time.Second, 10*time.Millisecond, "a marked packet on the target uplink", func(context.Context) (bool, error) {
		var ok bool
		first, ok = firstMarked(w, vmIP, qosDSCP, rep.SwitchAt)
		return ok, w.Err()
	})
	if err != nil {
		t.Fatalf("no DSCP %d packet from %s on %s's uplink after the switch: %v", qosDSCP, vmIP, target, err)
	}
	if late {
		mode += " (late target LSP)"
	}
	t.Logf("%s %s->%s: prepared %v, source LSP removed %v after switch, target up %v, done %v",
		mode, rep.Source, rep.Target, rep.Prepared.Round(time.Millisecond), rep.SourceLSPRemoved.Round(time.Millisecond),
		rep.TargetUp.Round(time.Millisecond), rep.Done.Round(time.Millisecond))
	t.Logf("%s loss VM->backup %d/%d (longest gap %v), backup->VM %d/%d (longest gap %v), first marked on %s %v after switch",
		mode, ru.Lost, ru.Sent, ru.LongestGap.Round(time.Millisecond), rd.Lost, rd.Sent, rd.LongestGap.Round(time.Millisecond),
		target, first.At.Sub(rep.SwitchAt).Round(time.Millisecond))
	for dir, r := range map[string]localnet.ProbeResult{"VM->backup": ru, "backup->VM": rd} {
		if r.LongestGap > 2*time.Second {
			t.Errorf("%s: %s gap %v, want < 2s", mode, dir, r.LongestGap)
		}
	}
	if mode == MigrateMultiChassis {
		checkHandedOver(t, tb, m, vm, rep, rowUUID)
	}
	reach(t, endpoint{guest, vmIP.String()}, endpoint{backup.Netns, backup.IPv4}, 20)
	if got := tb.GuestNodes(m.guest(vm)); len(got) != 1 || got[0] != target {
		t.Fatalf("guest plugged into %v after migration, want [%s]", got, target)
	}
}

// lspUUID returns the row UUID of the LSP named name.
func lspUUID(t *testing.T, tb *localnet.Testbed, name string) string {
	t.Helper()
	out, err := tb.NBCtl(context.Background(), "--bare", "--columns=_uuid", "find", "Logical_Switch_Port", "name="+name)
	if err != nil || len(strings.Fields(out)) != 1 {
		t.Fatalf("LSP %s: %q %v, want one row", name, out, err)
	}
	return strings.TrimSpace(out)
}

// checkHandedOver: after a multi-chassis migration the LSP row is the one
// the VM had (same UUID, still in the hand-made port group), named after
// the target launcher pod, with no row left under the source pod's name,
// and the target VIF's iface-id names it.
func checkHandedOver(t *testing.T, tb *localnet.Testbed, m *Manager, vm VM, rep MigrationReport, rowUUID string) {
	t.Helper()
	ctx := context.Background()
	in, err := m.Get(vm.Namespace, vm.Name)
	if err != nil {
		t.Fatal(err)
	}
	want := "vms.tenant.blue_vms_" + in.Pod
	if rep.TargetLSP != want || in.LSPs[0] != want || rep.SourceLSP == want {
		t.Fatalf("handover: report %s -> %s, VM LSP %s, want -> %s (target pod %s)", rep.SourceLSP, rep.TargetLSP, in.LSPs[0], want, in.Pod)
	}
	if got := lspUUID(t, tb, want); got != rowUUID {
		t.Errorf("LSP %s is row %s, want the migrated row %s", want, got, rowUUID)
	}
	if out, err := tb.NBCtl(ctx, "--bare", "--columns=_uuid", "find", "Logical_Switch_Port", "name="+rep.SourceLSP); err != nil || out != "" {
		t.Errorf("LSP %s still exists after the handover: %q %v", rep.SourceLSP, out, err)
	}
	if out, err := tb.NBCtl(ctx, "--bare", "--columns=ports", "list", "Port_Group", qosPG); err != nil || !strings.Contains(out, rowUUID) {
		t.Errorf("port group %s ports %q (%v), want it to hold %s", qosPG, out, err, rowUUID)
	}
	if vif, err := m.vifOf(ctx, in.Node, want); err != nil {
		t.Errorf("target VIF: %v", err)
	} else {
		t.Logf("handover: %s -> %s (row %s, VIF %s on %s) in %v", rep.SourceLSP, want, rowUUID, vif, in.Node, rep.Handover.Round(time.Millisecond))
	}
	if rep.HandoverAt.Before(rep.SwitchAt) || rep.Handover <= 0 {
		t.Errorf("handover at %v (switch %v), took %v", rep.HandoverAt, rep.SwitchAt, rep.Handover)
	}
}

// restartDaemons restarts ovn-controller, ovs-vswitchd, northd and the NB
// ovsdb-server on the VM's node and checks the guest reaches dst again.
func restartDaemons(t *testing.T, tb *localnet.Testbed, from, to endpoint) {
	ctx := context.Background()
	for _, r := range []struct {
		node, daemon string
		mode         localnet.RestartMode
	}{
		{"node1", localnet.DaemonOVNController, localnet.RestartKill},
		{"node1", localnet.DaemonOVNController, localnet.RestartGraceful},
		{"node1", localnet.DaemonVSwitchd, localnet.RestartKill},
		{"", localnet.DaemonNorthd, localnet.RestartGraceful},
		{"", localnet.DaemonNB, localnet.RestartKill},
	} {
		before, _ := tb.DaemonPid(r.node, r.daemon)
		start := time.Now()
		if err := tb.RestartDaemon(ctx, r.node, r.daemon, r.mode); err != nil {
			t.Fatal(err)
		}
		after, err := tb.DaemonPid(r.node, r.daemon)
		if err != nil || after == before {
			t.Fatalf("%s %s: pid %d -> %d (%v)", r.node, r.daemon, before, after, err)
		}
		if err := tb.WaitHVSync(ctx); err != nil {
			t.Fatalf("after %s restart: %v", r.daemon, err)
		}
		reachEventually(t, from, to)
		t.Logf("%s %s (%s): restarted, hv synced and reachable %v after the stop", r.node, r.daemon, r.mode, time.Since(start).Round(time.Millisecond))
	}
}
