package audit

import (
	"cmp"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/nqos/nqos/internal/qos"
)

// Kind is one kind of drift.
type Kind string

// Kinds of drift.
const (
	MissingQoS        Kind = "MissingQoS"        // an expected QoS row is absent
	ExtraQoS          Kind = "ExtraQoS"          // an nqos QoS row no object expects
	DifferentQoS      Kind = "DifferentQoS"      // a QoS row whose columns differ
	MissingPortGroup  Kind = "MissingPortGroup"  // an expected port group is absent
	ExtraPortGroup    Kind = "ExtraPortGroup"    // an nqos port group no object expects
	MissingMember     Kind = "MissingMember"     // a port group lacks a port
	ExtraMember       Kind = "ExtraMember"       // a port group holds a port it should not
	MissingAddressSet Kind = "MissingAddressSet" // an expected address set is absent
	ExtraAddressSet   Kind = "ExtraAddressSet"   // an nqos address set no object expects
	MissingAddress    Kind = "MissingAddress"    // an address set lacks an entry
	ExtraAddress      Kind = "ExtraAddress"      // an address set holds an entry it should not
	ForeignQoS        Kind = "ForeignQoS"        // another writer's row in nqos's priority range
	AppliedButAbsent  Kind = "AppliedButAbsent"  // the status says applied, the rows are absent
	// DifferentExternalIDs: a port group or address set of the expected
	// name whose external_ids differ.
	DifferentExternalIDs Kind = "DifferentExternalIDs"
)

// Finding is one drift in one zone, naming the object, the table and the
// row.
type Finding struct {
	Zone string `json:"zone"`
	Kind Kind   `json:"kind"`
	// Object is the NetworkQoS ("ns/name") the row is, or should be, of;
	// "" for a row of another writer.
	Object string `json:"object"`
	Table  string `json:"table"`
	// Row names the row: a QoS row's k8s.ovn.org/id (or UUID) and its
	// switch, a port group's or address set's name.
	Row    string `json:"row"`
	Detail string `json:"detail"`
}

// String is the finding as one line.
func (f Finding) String() string {
	obj := f.Object
	if obj == "" {
		obj = "(no NetworkQoS)"
	}
	return string(f.Kind) + " zone " + f.Zone + " " + obj + " " + f.Table + " " + f.Row + ": " + f.Detail
}

// Object is a NetworkQoS as the zone's expectations see it.
type Object struct {
	Key string // "ns/name"
	// Accepted: the compiler accepts it (its rows are expected).
	Accepted bool
	// AppliedCondition is the condition type of its status saying its rows
	// are applied in this zone ("" when none says so).
	AppliedCondition string
}

// Expected is what one zone's Northbound should hold.
type Expected struct {
	// Rows are the compiled rows of every accepted object in the zone.
	Rows    qos.Desired
	Objects []Object
	// pod finds the cluster's pods, for the ports that depart.
	pod func(namespace, name string) (*corev1.Pod, bool, error)
}

// Foreign is a QoS row nqos does not own, bound to a switch.
type Foreign struct {
	UUID, Switch string
	Priority     int
	Match        string
	// Owner names the writer (its owner-controller, else "no owner"),
	// ID its k8s.ovn.org/id or "".
	Owner, ID string
}

// Actual is what one zone's Northbound holds.
type Actual struct {
	// Owned are the rows carrying nqos's ownership key.
	Owned qos.Desired
	// Foreign are the QoS rows of other writers.
	Foreign []Foreign
	// Ports are the names of the logical switch ports it holds.
	Ports []string
}

// Compare lists the drift between what zone's Northbound should hold and
// what it holds, sorted by object, table, row and kind.
func Compare(zone string, want Expected, got Actual) []Finding {
	c := &comparer{zone: zone}
	want = withTransient(want, got)
	c.qosRows(want.Rows.QoS, got.Owned.QoS)
	c.sets(portGroupKinds(), portGroupSets(want.Rows.PortGroups), portGroupSets(got.Owned.PortGroups))
	c.sets(addressSetKinds(), addressSets(want.Rows.AddressSets), addressSets(got.Owned.AddressSets))
	c.foreign(want.Rows.QoS, got.Foreign)
	c.applied(want, got.Owned)
	slices.SortFunc(c.out, func(a, b Finding) int {
		return cmp.Or(cmp.Compare(a.Object, b.Object), cmp.Compare(a.Table, b.Table), cmp.Compare(a.Row, b.Row),
			cmp.Compare(a.Kind, b.Kind), cmp.Compare(a.Detail, b.Detail))
	})
	return c.out
}

type comparer struct {
	zone string
	out  []Finding
}

func (c *comparer) add(kind Kind, object, table, row, detail string) {
	c.out = append(c.out, Finding{Zone: c.zone, Kind: kind, Object: object, Table: table, Row: row, Detail: detail})
}

// objectOf is the NetworkQoS "ns/name" of a row's external_ids.
func objectOf(ext map[string]string) string {
	ns, name, ok := strings.Cut(ext[qos.ObjectNameKey], ":")
	if !ok {
		return ext[qos.ObjectNameKey]
	}
	return ns + "/" + name
}
