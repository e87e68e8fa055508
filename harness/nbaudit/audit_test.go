package nbaudit_test

import (
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/nqos/nqos/harness/nbaudit"
	"github.com/nqos/nqos/internal/poll"
	"github.com/nqos/nqos/internal/qos"
)

// TestAudit seeds broken owned rows with ovn-nbctl and expects exactly
// the violations they carry; a foreign row with the same defects is not
// reported, and an implicit $<pg>_ip4 set of an existing group is fine.
func TestAudit(t *testing.T) {
	f := newFixture(t, "p1")
	_, good := f.ApplyGold("ns1")
	pg := good.PortGroups[0].Name
	if v := f.audit(); len(v) != 0 {
		t.Fatalf("Audit of a clean NB = %+v", v)
	}

	ctrl := qos.ControllerName(testNet)
	id := func(s string) string { return ctrl + ":" + qos.OwnerType + ":" + s }
	owned := func(s string) map[string]string {
		return map[string]string{qos.OwnerTypeKey: qos.OwnerType, qos.OwnerControllerKey: ctrl, qos.NetworkKey: testNet,
			qos.ObjectNameKey: "ns1:gold", qos.PrimaryIDKey: id(s)}
	}
	var args []string
	for i, row := range []struct {
		match string
		ext   map[string]string
	}{
		{"inport == @missing_pg && ip4.dst == {$missing_as}", owned("x:dangling")},
		{"inport == @" + pg + " && ip4.src == $" + pg + "_ip4", owned("x:implicit")},
		{"ip4", owned("x:dup")},
		{"ip6", owned("x:dup")},
		{"inport == @foreign_missing", map[string]string{qos.OwnerTypeKey: "EgressQoS", qos.PrimaryIDKey: "x:dup"}},
	} {
		ref := "@q" + string(rune('a'+i))
		args = append(args, "--", "--id="+ref, "create", "QoS", "priority=100", "direction=to-lport",
			"match="+quote(row.match), "action:dscp=1")
		args = append(args, extArgs(row.ext)...)
		args = append(args, "--", "add", "Logical_Switch", testSwitch, "qos_rules", ref)
	}
	bad := owned("nocolon")
	bad[qos.ObjectNameKey] = "nocolon"
	args = append(args, "--", "create", "Port_Group", "name=badname")
	args = append(args, extArgs(bad)...)
	f.Srv.MustNBCtl(args...)
	f.WaitUntil("seeded rows in cache", func() (bool, error) { return len(f.audit()) >= 4, nil })

	want := []nbaudit.Violation{
		{Row: "Port_Group badname", Problem: `external_ids k8s.ovn.org/name="nocolon" does not name a NetworkQoS`},
		{Row: "QoS " + id("x:dangling"), Problem: "match references missing address set $missing_as"},
		{Row: "QoS " + id("x:dangling"), Problem: "match references missing port group @missing_pg"},
		{Row: "QoS " + id("x:dup"), Problem: "2 owned QoS rows share this k8s.ovn.org/id"},
	}
	if got := f.audit(); !reflect.DeepEqual(got, want) {
		t.Fatalf("Audit = %+v\nwant %+v", got, want)
	}
}

// TestAuditFailsOnReadError: with the NB server gone the client's cache
// cannot be read consistently; Audit returns that error, never a clean
// result, and a Watcher started then records that it cannot watch.
func TestAuditFailsOnReadError(t *testing.T) {
	f := newFixture(t, "p1")
	f.ApplyGold("ns1")
	f.Srv.Stop()
	f.WaitUntil("Audit to fail on the stopped NB", func() (bool, error) {
		v, err := nbaudit.Audit(f.Ctx, f.C)
		if err == nil {
			return false, poll.Retry("Audit returned %d violations and no error", len(v))
		}
		if v != nil {
			return false, fmt.Errorf("Audit returned violations %+v with its error %v", v, err)
		}
		return true, nil
	})
	w := nbaudit.Watch(f.Ctx, f.Srv.Addr(), nbaudit.Options{})
	got := w.Stop()
	if len(got) != 1 || got[0].Violation.Row != "NB monitor" || !strings.Contains(got[0].Violation.Problem, "cannot watch") {
		t.Fatalf("sightings of a watcher on a stopped NB = %+v, want one NB monitor: cannot watch", got)
	}
	t.Logf("watcher on a stopped NB: %s", got[0].Violation.Problem)
}
