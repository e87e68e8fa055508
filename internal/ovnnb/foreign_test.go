package ovnnb_test

import (
	"reflect"
	"strings"
	"testing"

	"github.com/nqos/nqos/internal/ovnnb"
	"github.com/nqos/nqos/internal/ovnnb/nbtest"
)

// seedForeign writes rows other owners hold, some deliberately close to
// ours (same namespace, same object name under another owner-type, a
// NetworkQoS-like name without owner-type), through ovn-nbctl.
func seedForeign(f *fixture) {
	f.T.Helper()
	f.Srv.MustNBCtl(
		"--", "--id=@q1", "create", "QoS", "priority=10600", "direction=to-lport",
		`match="ip4.src == 10.0.0.1"`, "action:dscp=10",
		`external_ids:"k8s.ovn.org/owner-type"=EgressQoS`, `external_ids:"k8s.ovn.org/name"=ns1`,
		"--", "add", "Logical_Switch", testSwitch, "qos_rules", "@q1",
		"--", "--id=@q2", "create", "QoS", "priority=10601", "direction=to-lport",
		`match="ip4"`, "action:dscp=12", `external_ids:"k8s.ovn.org/name"="ns1:gold"`,
		"--", "add", "Logical_Switch", testSwitch, "qos_rules", "@q2",
		"--", "pg-add", "foreign_pg", "p1",
		"--", "set", "Port_Group", "foreign_pg",
		`external_ids:"k8s.ovn.org/owner-type"=NetworkPolicy`, `external_ids:"k8s.ovn.org/name"="ns1:gold"`,
		"--", "create", "Address_Set", "name=foreign_as", `addresses="10.0.0.1"`,
		`external_ids:"k8s.ovn.org/owner-type"=Namespace`, `external_ids:"k8s.ovn.org/name"=ns1`,
	)
}

// foreignRows is every row nqos does not own and the switches
// referencing each such QoS row.
type foreignRows struct {
	QoS      []nbtest.QoS
	PGs      []nbtest.PortGroup
	ASes     []nbtest.AddressSet
	Bindings map[string][]string
}

func foreignOf(s nbState) foreignRows {
	out := foreignRows{Bindings: map[string][]string{}}
	for _, q := range s.QoS {
		if !ovnnb.IsOwned(q.ExternalIDs) {
			out.QoS = append(out.QoS, q)
			out.Bindings[q.UUID] = s.switchesOf(q.UUID)
		}
	}
	for _, p := range s.PGs {
		if !ovnnb.IsOwned(p.ExternalIDs) {
			out.PGs = append(out.PGs, p)
		}
	}
	for _, a := range s.ASes {
		if !ovnnb.IsOwned(a.ExternalIDs) {
			out.ASes = append(out.ASes, a)
		}
	}
	return out
}

// TestOnlyOwnedRowsTouched: applying, changing and tearing down one object
// leaves other owners' rows and another NetworkQoS's rows as they were.
func TestOnlyOwnedRowsTouched(t *testing.T) {
	f := newFixture(t, "p1", "p2", "p3")
	seedForeign(f)
	before := f.state()
	foreign := foreignOf(before)
	if len(foreign.QoS) != 2 || len(foreign.PGs) != 1 || len(foreign.ASes) != 1 {
		t.Fatalf("seeded foreign rows = %d QoS, %d PG, %d AS; want 2, 1, 1", len(foreign.QoS), len(foreign.PGs), len(foreign.ASes))
	}
	other := ovnnb.Key{Namespace: "ns1", Name: "silver"}
	otherRows := object(other, 20, []string{"p3"}, rule{DSCP: 8})
	destSet(other, &otherRows, 0, "192.0.2.1")
	f.Apply(other, otherRows)

	key := ovnnb.Key{Namespace: "ns1", Name: "gold"}
	f.objectLife(t, key, func(step string) {
		now := f.state()
		if got := foreignOf(now); !reflect.DeepEqual(got, foreign) {
			t.Fatalf("%s changed foreign rows:\n got %+v\nwant %+v", step, got, foreign)
		}
		if d := diffApplied(now, other, otherRows); len(d) > 0 {
			t.Fatalf("%s changed NetworkQoS %s: %v", step, other, d)
		}
	})
	if d := diffCounts(f.state(), key, ovnnb.ObjectRows{}); len(d) > 0 {
		t.Fatalf("teardown left rows: %v", d)
	}
	if keys := f.ownedKeys(); !reflect.DeepEqual(keys, []ovnnb.Key{other}) {
		t.Fatalf("OwnedKeys = %v, want [%v]", keys, other)
	}
}

// TestApplyRefusesForeignName: a wanted port group whose name is taken by
// another owner's row is an error naming both, and nothing is written.
func TestApplyRefusesForeignName(t *testing.T) {
	f := newFixture(t, "p1")
	key := ovnnb.Key{Namespace: "ns1", Name: "gold"}
	want := object(key, 60, []string{"p1"}, rule{DSCP: 46})
	f.nbctlSynced("--", "pg-add", want.PortGroups[0].Name, "p1",
		"--", "set", "Port_Group", want.PortGroups[0].Name, `external_ids:"k8s.ovn.org/owner-type"=NetworkPolicy`)
	before := f.state()
	_, err := f.C.Apply(f.Ctx, key, want)
	if err == nil || !strings.Contains(err.Error(), want.PortGroups[0].Name) || !strings.Contains(err.Error(), "ns1/gold") {
		t.Fatalf("Apply error = %v, want one naming the port group and ns1/gold", err)
	}
	if after := f.state(); !reflect.DeepEqual(after, before) {
		t.Fatalf("NB changed after a refused Apply:\n before %+v\n after %+v", before, after)
	}
}
