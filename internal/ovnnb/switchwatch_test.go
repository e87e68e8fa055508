package ovnnb_test

import (
	"errors"
	"reflect"
	"testing"

	"github.com/nqos/nqos/internal/ovnnb"
)

// TestSwitchAppearsLater: Apply fails for a missing switch; creating it
// announces its name, HasSwitch turns true, and the
// next Apply writes the rows. After an NB restart, new switches are still
// announced.
func TestSwitchAppearsLater(t *testing.T) {
	f := newFixture(t, "p1")
	const late = "late_ovn_localnet_switch"
	adds := make(announcements, 64)
	f.C.OnLogicalSwitchAdd(func(name string) { adds <- name })
	if !f.C.HasSwitch(testSwitch) {
		t.Fatalf("HasSwitch(%s) false for a switch in the NB", testSwitch)
	}
	if f.C.HasSwitch(late) {
		t.Fatalf("HasSwitch(%s) true before it exists", late)
	}
	key := ovnnb.Key{Namespace: "ns1", Name: "waits"}
	want := object(key, 10, []string{"p1"}, rule{DSCP: 46})
	want.QoS[0].Switch = late
	res, err := f.C.Apply(f.Ctx, key, want)
	if !errors.Is(err, ovnnb.ErrMissingSwitch) || !reflect.DeepEqual(res.MissingSwitches, []string{late}) {
		t.Fatalf("Apply before the switch exists = %+v, %v; want ErrMissingSwitch for %s", res, err, late)
	}
	if adds.seen(late) {
		t.Fatalf("%s announced before it was added", late)
	}

	f.Srv.MustNBCtl("ls-add", late)
	f.waitUntil("OnLogicalSwitchAdd("+late+")", func() bool { return adds.seen(late) })
	if !f.C.HasSwitch(late) {
		t.Fatalf("HasSwitch(%s) false after its add callback", late)
	}
	if res := f.Apply(key, want); !res.Changed || len(res.MissingSwitches) > 0 {
		t.Fatalf("Apply after ls-add = %+v, want Changed and no missing switch", res)
	}
	f.requireApplied(key, want)

	f.Srv.Stop()
	f.Srv.Restart()
	const again = "again_ovn_localnet_switch"
	f.Srv.MustNBCtl("ls-add", again)
	f.waitUntil("OnLogicalSwitchAdd("+again+") after reconnect", func() bool { return adds.seen(again) })
	if !f.C.HasSwitch(again) || !f.C.HasSwitch(late) {
		t.Fatalf("HasSwitch after reconnect: %s=%v %s=%v, want both true", again, f.C.HasSwitch(again), late, f.C.HasSwitch(late))
	}
}
