package ovnnb_test

import (
	"errors"
	"maps"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/nqos/nqos/internal/ovnnb"
	"github.com/nqos/nqos/internal/qos"
)

// TestApplyLifecycle walks one object through create, in-place update,
// rule removal and emptying, checking the NB with ovn-nbctl after every
// step and that repeating a step sends no transaction.
func TestApplyLifecycle(t *testing.T) {
	ports := portNames("ns1.net1_ns1", 3)
	f := newFixture(t, ports...)
	key := ovnnb.Key{Namespace: "ns1", Name: "gold"}

	create := object(key, 60, ports[:2],
		rule{DSCP: 46, Rate: 100000, Burst: 5000},
		rule{DSCP: 10})
	set := destSet(key, &create, 1, "203.0.113.7", "198.51.100.0/24")
	create.QoS[1].Match += " && ip4.dst == {$" + set + "} && tcp && tcp.dst == 80"

	update := object(key, 61, ports[1:],
		rule{DSCP: 34},
		rule{DSCP: 12, Dest: "ip4.dst == 192.0.2.0/24"})
	set2 := destSet(key, &update, 1, "203.0.113.8")
	update.QoS[1].Match += " && ip4.dst != {$" + set2 + "}"

	shrink := object(key, 61, ports[2:], rule{DSCP: 34})
	empty := ovnnb.ObjectRows{}

	var firstUUIDs map[string]string
	for _, step := range []struct {
		name        string
		want        ovnnb.ObjectRows
		sameUUIDsAs bool // QoS rows must be updated in place
	}{
		{"create", create, false},
		{"update in place", update, true},
		{"drop rule 1 and its set", shrink, true},
		{"empty", empty, false},
	} {
		res := f.Apply(key, step.want)
		if !res.Changed || len(res.MissingPorts) > 0 || len(res.MissingSwitches) > 0 {
			t.Fatalf("%s: first Apply = %+v, want Changed and nothing missing", step.name, res)
		}
		f.requireApplied(key, step.want)
		if again := f.Apply(key, step.want); again.Changed {
			t.Fatalf("%s: second Apply with the same want committed a transaction", step.name)
		}
		uuids := qosUUIDs(f.state(), key)
		if firstUUIDs == nil {
			firstUUIDs = uuids
		}
		if step.sameUUIDsAs {
			for id, u := range uuids {
				if firstUUIDs[id] != u {
					t.Fatalf("%s: QoS %s was recreated (%s -> %s), want update in place", step.name, id, firstUUIDs[id], u)
				}
			}
		}
		if got := ownedRows(f.rows(), key); !reflect.DeepEqual(got, normalized(step.want)) {
			t.Fatalf("%s: Rows() = %+v\nwant %+v", step.name, got, normalized(step.want))
		}
	}
	if keys := f.ownedKeys(); len(keys) != 0 {
		t.Fatalf("OwnedKeys after emptying = %v, want none", keys)
	}
}

func qosUUIDs(s nbState, key ovnnb.Key) map[string]string {
	out := map[string]string{}
	for _, q := range s.QoS {
		if ownedBy(q.ExternalIDs, key) {
			out[q.ExternalIDs[qos.PrimaryIDKey]] = q.UUID
		}
	}
	return out
}

// ownedRows filters Rows() to one object.
func ownedRows(d qos.Desired, key ovnnb.Key) ovnnb.ObjectRows {
	out := ovnnb.ObjectRows{PortGroups: []qos.PortGroup{}, AddressSets: []qos.AddressSet{}, QoS: []qos.QoSRow{}}
	for _, p := range d.PortGroups {
		if ownedBy(p.ExternalIDs, key) {
			out.PortGroups = append(out.PortGroups, p)
		}
	}
	for _, a := range d.AddressSets {
		if ownedBy(a.ExternalIDs, key) {
			out.AddressSets = append(out.AddressSets, a)
		}
	}
	for _, q := range d.QoS {
		if ownedBy(q.ExternalIDs, key) {
			out.QoS = append(out.QoS, q)
		}
	}
	return out
}

// normalized is want in Rows()' order and with sorted members.
func normalized(w ovnnb.ObjectRows) ovnnb.ObjectRows {
	out := ovnnb.ObjectRows{PortGroups: []qos.PortGroup{}, AddressSets: []qos.AddressSet{}, QoS: []qos.QoSRow{}}
	for _, p := range w.PortGroups {
		p.Ports = sortedCopy(p.Ports)
		out.PortGroups = append(out.PortGroups, p)
	}
	for _, a := range w.AddressSets {
		a.Addresses = sortedCopy(a.Addresses)
		out.AddressSets = append(out.AddressSets, a)
	}
	out.QoS = append(out.QoS, w.QoS...)
	return out
}

// TestApplyPortAppearsLater: a member whose LSP is not in the NB yet is
// reported missing, announced when it lands, and added by the next Apply.
func TestApplyPortAppearsLater(t *testing.T) {
	f := newFixture(t, "ns1.net1_ns1_vm-a")
	added := make(chan string, 16)
	f.C.OnLogicalSwitchPortAdd(func(name string) { added <- name })
	key := ovnnb.Key{Namespace: "ns1", Name: "late"}
	want := object(key, 10, []string{"ns1.net1_ns1_vm-a", "ns1.net1_ns1_vm-b"}, rule{DSCP: 46})

	if f.C.HasPort("ns1.net1_ns1_vm-b") {
		t.Fatal("HasPort true for a port not in the NB")
	}
	res := f.Apply(key, want)
	if !reflect.DeepEqual(res.MissingPorts, []string{"ns1.net1_ns1_vm-b"}) || !res.Changed {
		t.Fatalf("first Apply = %+v, want Changed and MissingPorts [ns1.net1_ns1_vm-b]", res)
	}
	f.requireApplied(key, bridged(want, "ns1.net1_ns1_vm-b"), "ns1.net1_ns1_vm-b")

	f.Srv.MustNBCtl("lsp-add", testSwitch, "ns1.net1_ns1_vm-b")
	f.waitUntil("OnLogicalSwitchPortAdd(ns1.net1_ns1_vm-b)", func() bool {
		select {
		case name := <-added:
			return name == "ns1.net1_ns1_vm-b"
		default:
			return false
		}
	})
	if !f.C.HasPort("ns1.net1_ns1_vm-b") {
		t.Fatal("HasPort false after the add callback")
	}
	res = f.Apply(key, want)
	if len(res.MissingPorts) != 0 || !res.Changed {
		t.Fatalf("Apply after lsp-add = %+v, want Changed and nothing missing", res)
	}
	f.requireApplied(key, bridged(want, "ns1.net1_ns1_vm-b")) // joined; its bridge goes next
	if res = f.Apply(key, want); !res.Changed || len(res.Bridged) != 0 {
		t.Fatalf("Apply after the join = %+v, want the bridge deleted", res)
	}
	f.requireApplied(key, want)
}

// bridged is want with the bridging rows of ports for each port-group row.
func bridged(want ovnnb.ObjectRows, ports ...string) ovnnb.ObjectRows {
	out := want
	out.QoS = slices.Clone(want.QoS)
	for _, r := range want.QoS {
		if qos.SourceGroup(r) == "" {
			continue
		}
		for _, p := range ports {
			out.QoS = append(out.QoS, qos.BridgeRow(r, p))
		}
	}
	return out
}

// TestApplyMissingSwitch: nothing is written when a row's switch is absent.
func TestApplyMissingSwitch(t *testing.T) {
	f := newFixture(t, "p1")
	key := ovnnb.Key{Namespace: "ns1", Name: "nosw"}
	want := object(key, 10, []string{"p1"}, rule{DSCP: 46}, rule{DSCP: 8})
	want.QoS[1].Switch = "other_ovn_localnet_switch"
	res, err := f.C.Apply(f.Ctx, key, want)
	if !errors.Is(err, ovnnb.ErrMissingSwitch) || !strings.Contains(err.Error(), "ns1/nosw") {
		t.Fatalf("Apply error = %v, want ErrMissingSwitch naming ns1/nosw", err)
	}
	if !reflect.DeepEqual(res.MissingSwitches, []string{"other_ovn_localnet_switch"}) || res.Changed {
		t.Fatalf("Apply = %+v, want MissingSwitches [other_ovn_localnet_switch], not Changed", res)
	}
	if d := diffCounts(f.state(), key, ovnnb.ObjectRows{}); len(d) > 0 {
		t.Fatalf("rows written despite the missing switch: %v", d)
	}
}

// TestApplyRejectsBadInput: invalid wants name the object and field and
// write nothing.
func TestApplyRejectsBadInput(t *testing.T) {
	f := newFixture(t, "p1")
	key := ovnnb.Key{Namespace: "ns1", Name: "bad"}
	for _, tc := range []struct {
		name   string
		break_ func(*ovnnb.ObjectRows)
		field  string
	}{
		{"foreign owner-type", func(w *ovnnb.ObjectRows) { w.QoS[0].ExternalIDs[qos.OwnerTypeKey] = "EgressQoS" }, "externalIDs[k8s.ovn.org/owner-type]"},
		{"other object's name", func(w *ovnnb.ObjectRows) { w.PortGroups[0].ExternalIDs[qos.ObjectNameKey] = "ns1:other" }, "externalIDs[k8s.ovn.org/name]"},
		{"duplicate id", func(w *ovnnb.ObjectRows) { w.QoS[1].ExternalIDs = maps.Clone(w.QoS[0].ExternalIDs) }, "externalIDs[k8s.ovn.org/id] is duplicated"},
		{"dscp 64", func(w *ovnnb.ObjectRows) { w.QoS[1].Action.DSCP = 64 }, "action.dscp 64"},
		{"priority too high", func(w *ovnnb.ObjectRows) { w.QoS[0].Priority = 40000 }, "priority 40000"},
		{"no switch", func(w *ovnnb.ObjectRows) { w.QoS[0].Switch = "" }, "field switch"},
		{"empty port group name", func(w *ovnnb.ObjectRows) { w.PortGroups[0].Name = "" }, "field name"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			want := object(key, 10, []string{"p1"}, rule{DSCP: 46}, rule{DSCP: 8})
			tc.break_(&want)
			_, err := f.C.Apply(f.Ctx, key, want)
			if err == nil || !strings.Contains(err.Error(), "ns1/bad") || !strings.Contains(err.Error(), tc.field) {
				t.Fatalf("Apply error = %v, want one naming ns1/bad and %q", err, tc.field)
			}
			if d := diffCounts(f.state(), key, ovnnb.ObjectRows{}); len(d) > 0 {
				t.Fatalf("rows written for invalid input: %v", d)
			}
		})
	}
}

// TestApplyReadsOwnWrites: right after an update-only transaction (no
// inserted or deleted row to wait for) the next Apply already sees it in
// the cache, so it sends nothing. ovsdb-server sends a transaction's
// monitor update before its reply and libovsdb handles both in order.
func TestApplyReadsOwnWrites(t *testing.T) {
	f := newFixture(t, "p1", "p2")
	key := ovnnb.Key{Namespace: "ns1", Name: "gold"}
	var v [2]ovnnb.ObjectRows
	for i := range v {
		v[i] = object(key, 60+i, []string{"p1", "p2"}[i:], rule{DSCP: 46 - i, Rate: uint32(1000 * (i + 1))})
		destSet(key, &v[i], 0, []string{"192.0.2.1", "192.0.2.2"}[i])
	}
	f.Apply(key, v[0])
	for i := range 300 {
		want := v[(i+1)%2]
		if res := f.Apply(key, want); !res.Changed {
			t.Fatalf("iteration %d: Apply of a changed want sent nothing", i)
		}
		if res := f.Apply(key, want); res.Changed {
			t.Fatalf("iteration %d: immediate re-Apply sent a transaction: the cache lagged behind the commit", i)
		}
	}
}
