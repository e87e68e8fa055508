package vmlife

import (
	"slices"
	"testing"
)

// Scenario 3: a launcher pod recreated (new pod, new LSP, same MAC) and a
// guest IP change leave the VM's class unchanged: every packet on the
// uplink keeps the mark and the port group holds the VM's current port.
func TestLauncherRestartAndGuestIPChange(t *testing.T) {
	e := boot(t, "v3")
	e.createNQ(prodObj, "production", 50, prodDSCP, 0, 0)
	ref := e.createVM(vm("rst", "node1", "02:00:00:00:30:01", "10.20.3.1/16", "production"))
	e.waitMembers(prodObj, e.lsp(ref))
	spec := GuestSpec{VM: ref, Object: prodObj, DSCP: prodDSCP, Traffic: Traffic{Peer: peerHost, After: afterPackets}}

	t.Run("launcher restart", func(t *testing.T) {
		res, err := e.ops.RestartLauncher(e.ctx, spec)
		if err != nil {
			t.Fatal(err)
		}
		logJSON(t, "launcher restart", res)
		t.Logf("restart %v: new LSP in NB %v, in group %v, old out %v; out lost %d/%d (gap %v); unmarked %d of %d",
			res.Restart, res.NewLSPInNB, res.NewInGroup, res.OldOutOfGroup, res.Out.Lost, res.Out.Sent, res.Out.LongestGap,
			res.Marking.Unmarked, res.Marking.Packets)
		if !slices.Equal(res.MembersBefore, []string{res.OldLSP}) || !slices.Equal(res.MembersAfter, []string{res.NewLSP}) {
			t.Errorf("members %v -> %v, want [%s] -> [%s]", res.MembersBefore, res.MembersAfter, res.OldLSP, res.NewLSP)
		}
		if res.NewLSP == res.OldLSP {
			t.Errorf("launcher restart kept LSP %s, want a new one", res.NewLSP)
		}
		// Unmarked packets are tolerated in two windows the controller
		// cannot close on its own, never after the new port is marked:
		// the old LSP is dropped from the group when its pod is deleted,
		// a few ms before the launcher deletes the LSP itself; and the
		// new LSP may be bound before OVN installs the port-group flow.
		late := res.Marking.LastUnmarked.Sub(res.Start.Add(res.NewInGroup))
		if res.Marking.Unmarked > 0 {
			t.Logf("last unmarked packet %v after the new port joined the group", late)
		}
		if react := res.NewInGroup - res.NewLSPInNB; react < -memberSample || react > controllerMargin {
			t.Errorf("controller put the new LSP in the group %v after it appeared in the NB, want within [0, %v]", react, controllerMargin)
		}
		if res.Marking.Unmarked > newPortUnmarkedTol || (res.Marking.Unmarked > 0 && late > pgChangeBound) || res.Marking.Marked < minSeen {
			t.Errorf("%d unmarked (tolerance %d), the last %v after the port joined the group (bound %v), %d marked (want >= %d)",
				res.Marking.Unmarked, newPortUnmarkedTol, late, pgChangeBound, res.Marking.Marked, minSeen)
		}
		if res.Out.Lost > maxLost || res.Out.LongestGap > maxGap {
			t.Errorf("out lost %d gap %v, want <= %d and <= %v", res.Out.Lost, res.Out.LongestGap, maxLost, maxGap)
		}
	})
	t.Run("guest IP change", func(t *testing.T) {
		res, err := e.ops.ChangeGuestIP(e.ctx, spec, "10.20.3.99/16")
		if err != nil {
			t.Fatal(err)
		}
		logJSON(t, "guest IP change", res)
		t.Logf("%s -> %s: before %d/%d marked, after %d/%d marked; members %v -> %v",
			res.OldIP, res.NewIP, res.Before.Marked, res.Before.Packets, res.After.Marked, res.After.Packets, res.MembersBefore, res.MembersAfter)
		if len(res.MembersBefore) != 1 || !slices.Equal(res.MembersBefore, res.MembersAfter) {
			t.Errorf("members %v -> %v, want one port, unchanged", res.MembersBefore, res.MembersAfter)
		}
		for name, m := range map[string]Marking{"old IP": res.Before, "new IP": res.After} {
			if m.Unmarked != 0 || m.Marked < minSeen {
				t.Errorf("%s: %d unmarked, %d marked; want 0 and >= %d", name, m.Unmarked, m.Marked, minSeen)
			}
		}
	})
}
