package localnetenv

import (
	"slices"
	"testing"

	"github.com/nqos/nqos/internal/qos"
)

func TestMergeZoneRows(t *testing.T) {
	ids := map[string]string{"k8s.ovn.org/name": "vms:a"}
	row := func(prio int) qos.QoSRow {
		return qos.QoSRow{Switch: "sw", Direction: "to-lport", Priority: prio, Match: "inport == @pg", ExternalIDs: ids}
	}
	z1 := qos.Desired{PortGroups: []qos.PortGroup{{Name: "pg", Ports: []string{"p1"}, ExternalIDs: ids}},
		QoS: []qos.QoSRow{row(10600)}, AddressSets: []qos.AddressSet{{Name: "as", Addresses: []string{"10.0.0.1"}}}}
	z2 := qos.Desired{PortGroups: []qos.PortGroup{{Name: "pg", Ports: []string{"p3", "p2"}, ExternalIDs: ids}},
		QoS: []qos.QoSRow{row(10600)}, AddressSets: []qos.AddressSet{{Name: "as", Addresses: []string{"10.0.0.1"}}}}
	got := mergeZoneRows([]qos.Desired{z1, z2})
	if len(got.PortGroups) != 1 || !slices.Equal(got.PortGroups[0].Ports, []string{"p1", "p2", "p3"}) {
		t.Errorf("port groups %+v, want one holding p1 p2 p3", got.PortGroups)
	}
	if len(got.QoS) != 1 || len(got.AddressSets) != 1 {
		t.Errorf("equal rows of two zones: %d QoS, %d address sets, want 1 each", len(got.QoS), len(got.AddressSets))
	}
	if !slices.Equal(z1.PortGroups[0].Ports, []string{"p1"}) {
		t.Errorf("merge changed zone 1's port group: %v", z1.PortGroups[0].Ports)
	}
	// Zones that disagree show every variant, so an exact expectation fails.
	z2.QoS = []qos.QoSRow{row(10500)}
	z2.AddressSets[0].Addresses = nil
	got = mergeZoneRows([]qos.Desired{z1, z2})
	if len(got.QoS) != 2 || len(got.AddressSets) != 2 {
		t.Errorf("differing rows: %d QoS, %d address sets, want 2 each", len(got.QoS), len(got.AddressSets))
	}
	if one := mergeZoneRows([]qos.Desired{z1}); len(one.PortGroups) != 1 || len(one.QoS) != 1 {
		t.Errorf("one zone: %+v, want its rows", one)
	}
}
