package audit

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/nqos/nqos/internal/junit"
	"github.com/nqos/nqos/internal/qos"
)

func input(t *testing.T, file string) qos.Input {
	t.Helper()
	f, err := os.Open("../qos/testdata/" + file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	in, err := qos.DecodeManifests(f, file)
	if err != nil {
		t.Fatal(err)
	}
	return in
}

// clone is a deep copy of d through its JSON form.
func clone(t *testing.T, d qos.Desired) qos.Desired {
	t.Helper()
	js, err := json.Marshal(d)
	if err != nil {
		t.Fatal(err)
	}
	var out qos.Desired
	if err := json.Unmarshal(js, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

// held is an NB holding rows d and the LSPs of their port groups' members.
func held(t *testing.T, d qos.Desired) Actual {
	return Actual{Owned: clone(t, d), Ports: portsOf(d)}
}

// portsOf are the members of d's port groups, sorted.
func portsOf(d qos.Desired) []string {
	var out []string
	for _, pg := range d.PortGroups {
		out = append(out, pg.Ports...)
	}
	slices.Sort(out)
	return slices.Compact(out)
}

func TestCleanWhenTheNBHoldsTheCompiledRows(t *testing.T) {
	for _, file := range []string{"okep-worked-example.yaml", "dhcp-dest-podselector.yaml", "story1-tiers.yaml"} {
		want := Expect(input(t, file), ZoneOf(""), qos.ScopeAllNetworks, nil)
		if len(want.Rows.QoS) == 0 {
			t.Fatalf("%s: no rows expected", file)
		}
		z := NewZone("global", "unix:nb", want, held(t, want.Rows))
		if len(z.Findings) != 0 || z.Accepted == 0 {
			t.Errorf("%s: %+v", file, z)
		}
	}
}

// TestEachCorruptionIsReported: every kind of drift is found, naming the
// object, the zone, the table and the row.
func TestEachCorruptionIsReported(t *testing.T) {
	want := Expect(input(t, "dhcp-dest-podselector.yaml"), ZoneOf(""), qos.ScopeAllNetworks, nil)
	obj := objectOf(want.Rows.QoS[0].ExternalIDs)
	row0 := qosKey(want.Rows.QoS[0])
	pg, as := want.Rows.PortGroups[0], want.Rows.AddressSets[0]
	cases := []struct {
		name    string
		corrupt func(*Actual)
		want    Finding
	}{
		{"QoS row deleted", func(a *Actual) { a.Owned.QoS = a.Owned.QoS[1:] },
			Finding{Kind: MissingQoS, Object: obj, Table: TableQoS, Row: row0}},
		{"DSCP changed", func(a *Actual) { a.Owned.QoS[0].Action.DSCP = 63 },
			Finding{Kind: DifferentQoS, Object: obj, Table: TableQoS, Row: row0}},
		{"meter removed", func(a *Actual) { a.Owned.QoS[0].Bandwidth = &qos.Bandwidth{Rate: 1} },
			Finding{Kind: DifferentQoS, Object: obj, Table: TableQoS, Row: row0}},
		{"extra QoS row", func(a *Actual) {
			r := a.Owned.QoS[0]
			r.ExternalIDs = map[string]string{qos.PrimaryIDKey: "x-nqos-controller:NetworkQoS:ns:gone:0", qos.ObjectNameKey: "ns:gone"}
			a.Owned.QoS = append(a.Owned.QoS, r)
		}, Finding{Kind: ExtraQoS, Object: "ns/gone", Table: TableQoS}},
		{"port group member removed", func(a *Actual) { a.Owned.PortGroups[0].Ports = nil },
			Finding{Kind: MissingMember, Object: obj, Table: TablePortGroup, Row: pg.Name}},
		{"port group member added", func(a *Actual) { a.Owned.PortGroups[0].Ports = append(a.Owned.PortGroups[0].Ports, "intruder") },
			Finding{Kind: ExtraMember, Object: obj, Table: TablePortGroup, Row: pg.Name}},
		{"port group deleted", func(a *Actual) { a.Owned.PortGroups = a.Owned.PortGroups[1:] },
			Finding{Kind: MissingPortGroup, Object: obj, Table: TablePortGroup, Row: pg.Name}},
		{"address-set entry added", func(a *Actual) {
			a.Owned.AddressSets[0].Addresses = append(a.Owned.AddressSets[0].Addresses, "192.0.2.9")
		},
			Finding{Kind: ExtraAddress, Object: obj, Table: TableAddressSet, Row: as.Name}},
		{"address-set entry removed", func(a *Actual) { a.Owned.AddressSets[0].Addresses = nil },
			Finding{Kind: MissingAddress, Object: obj, Table: TableAddressSet, Row: as.Name}},
		{"address set deleted", func(a *Actual) { a.Owned.AddressSets = a.Owned.AddressSets[1:] },
			Finding{Kind: MissingAddressSet, Object: obj, Table: TableAddressSet, Row: as.Name}},
		{"foreign row in range", func(a *Actual) {
			a.Foreign = append(a.Foreign, Foreign{UUID: "u1", Switch: want.Rows.QoS[0].Switch, Priority: 10500, Owner: "no owner"})
		}, Finding{Kind: ForeignQoS, Table: TableQoS, Row: "u1 on " + want.Rows.QoS[0].Switch}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := held(t, want.Rows)
			c.corrupt(&got)
			fs := Compare("node1", want, got)
			if len(fs) != 1 {
				t.Fatalf("%d findings, want 1: %v", len(fs), fs)
			}
			f := fs[0]
			if f.Zone != "node1" || f.Kind != c.want.Kind || f.Object != c.want.Object || f.Table != c.want.Table ||
				(c.want.Row != "" && f.Row != c.want.Row) || f.Detail == "" {
				t.Errorf("finding %+v, want %+v", f, c.want)
			}
		})
	}
}

func TestForeignRowsOutsideTheRangeOrSwitchesAreNotDrift(t *testing.T) {
	want := Expect(input(t, "story1-tiers.yaml"), ZoneOf(""), qos.ScopeAllNetworks, nil)
	sw := want.Rows.QoS[0].Switch
	got := Actual{Owned: clone(t, want.Rows), Ports: portsOf(want.Rows), Foreign: []Foreign{
		{UUID: "below", Switch: sw, Priority: PriorityMin - 1},
		{UUID: "above", Switch: sw, Priority: PriorityMax + 1},
		{UUID: "elsewhere", Switch: "other_switch", Priority: 10100},
	}}
	if fs := Compare("global", want, got); len(fs) != 0 {
		t.Errorf("findings %v", fs)
	}
	got.Foreign = append(got.Foreign, Foreign{UUID: "edge", Switch: sw, Priority: PriorityMax})
	if fs := Compare("global", want, got); len(fs) != 1 || fs[0].Kind != ForeignQoS {
		t.Errorf("findings %v", fs)
	}
}

// TestPriorityRangeHoldsEveryCompiledRow ties the range to the compiler:
// the lowest and highest priorities it writes are inside.
func TestPriorityRangeHoldsEveryCompiledRow(t *testing.T) {
	in := input(t, "story1-tiers.yaml")
	for _, nq := range in.NetworkQoSes {
		nq.Spec.Priority = 100
		rules := nq.Spec.Egress
		for len(nq.Spec.Egress) < 20 {
			nq.Spec.Egress = append(nq.Spec.Egress, rules[0])
		}
	}
	want := Expect(in, ZoneOf(""), qos.ScopeAllNetworks, nil)
	top := 0
	for _, r := range want.Rows.QoS {
		top = max(top, r.Priority)
		if !InPriorityRange(r.Priority) {
			t.Errorf("row %s at %d outside %d..%d", qosKey(r), r.Priority, PriorityMin, PriorityMax)
		}
	}
	if top != PriorityMax {
		t.Errorf("highest compiled priority %d, range ends at %d", top, PriorityMax)
	}
}

func TestAppliedButAbsent(t *testing.T) {
	in := input(t, "story1-tiers.yaml")
	key := in.NetworkQoSes[0].Namespace + "/" + in.NetworkQoSes[0].Name
	status := map[string][]qos.Condition{key: {{Type: "NQOSReady-In-Zone-node-a", Status: "True"}}}
	want := Expect(in, ZoneOf("node-a"), qos.ScopeAllNetworks, status)
	got := held(t, want.Rows)
	got.Owned.QoS = slices.DeleteFunc(got.Owned.QoS, func(r qos.QoSRow) bool { return objectOf(r.ExternalIDs) == key })
	fs := Compare("node-a", want, got)
	var kinds []Kind
	for _, f := range fs {
		kinds = append(kinds, f.Kind)
	}
	if !slices.Contains(kinds, AppliedButAbsent) || !slices.Contains(kinds, MissingQoS) {
		t.Fatalf("findings %v", fs)
	}
	// Another zone's condition says nothing about this zone.
	want = Expect(in, ZoneOf("node-b"), qos.ScopeAllNetworks, status)
	for _, f := range Compare("node-b", want, got) {
		if f.Kind == AppliedButAbsent {
			t.Errorf("node-b: %v", f)
		}
	}
}

// TestZoneMembersAreTheZonesPorts: a node's zone expects only the ports
// of pods on that node.
func TestZoneMembersAreTheZonesPorts(t *testing.T) {
	in := input(t, "story1-tiers.yaml")
	a := Expect(in, ZoneOf("node-a"), qos.ScopeAllNetworks, nil)
	b := Expect(in, ZoneOf("node-b"), qos.ScopeAllNetworks, nil)
	all := Expect(in, ZoneOf(""), qos.ScopeAllNetworks, nil)
	members := func(e Expected) []string {
		var out []string
		for _, pg := range e.Rows.PortGroups {
			out = append(out, pg.Ports...)
		}
		slices.Sort(out)
		return out
	}
	ma, mb, mall := members(a), members(b), members(all)
	if len(ma) == 0 || len(mb) == 0 || len(ma)+len(mb) != len(mall) || slices.ContainsFunc(ma, func(p string) bool { return slices.Contains(mb, p) }) {
		t.Errorf("node-a %v, node-b %v, all %v", ma, mb, mall)
	}
	// node-b's rows in node-a's NB: the members of node-b are extra there.
	fs := Compare("node-a", a, Actual{Owned: clone(t, b.Rows), Ports: portsOf(all.Rows)})
	if len(fs) == 0 {
		t.Error("node-b's members in node-a's NB: no finding")
	}
}

func TestReportFormats(t *testing.T) {
	want := Expect(input(t, "story1-tiers.yaml"), ZoneOf("node-a"), qos.ScopeAllNetworks, nil)
	got := held(t, want.Rows)
	got.Owned.QoS[0].Action.DSCP = 1
	rep := NewReport("test", []ZoneReport{NewZone("node-a", "unix:a", want, got), Failed("node-b", "unix:b", os.ErrNotExist)})
	if rep.Clean() || rep.Summary.Findings != 1 || rep.Summary.Errors != 1 {
		t.Fatalf("summary %+v", rep.Summary)
	}
	var text, doc bytes.Buffer
	if err := WriteText(&text, rep); err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"DifferentQoS", "dscp 1, want", "NOT AUDITED", "1 findings, 1 zones not audited"} {
		if !strings.Contains(text.String(), s) {
			t.Errorf("text lacks %q:\n%s", s, text.String())
		}
	}
	if err := WriteJUnit(&doc, rep); err != nil {
		t.Fatal(err)
	}
	var suites junit.Suites
	if err := xml.Unmarshal(doc.Bytes(), &suites); err != nil {
		t.Fatal(err)
	}
	if suites.Failures != 1 || suites.Errors != 1 || len(suites.Suites) != 2 || suites.Tests < 3 {
		t.Errorf("junit %+v\n%s", suites, doc.String())
	}
	clean := NewReport("test", []ZoneReport{NewZone("node-a", "unix:a", want, held(t, want.Rows))})
	if !clean.Clean() {
		t.Errorf("clean report: %+v", clean.Summary)
	}
}
