package ovnnb_test

import (
	"errors"
	"os"
	"reflect"
	"sort"
	"testing"

	"github.com/nqos/nqos/internal/ovnnb"
	"github.com/nqos/nqos/internal/qos"
)

// TestCompiledRowsRoundTrip applies the compiler's real output for
// testdata/two-networks.yaml (an ipamless localnet network and a layer2
// network with an address-set destination) and reads it back: Rows() must
// equal what the compiler wanted, the NB invariants must hold, and teardown of
// every object must leave nothing owned.
func TestCompiledRowsRoundTrip(t *testing.T) {
	file, err := os.Open("testdata/two-networks.yaml")
	if err != nil {
		t.Fatal(err)
	}
	defer file.Close()
	in, err := qos.DecodeManifests(file, "testdata/two-networks.yaml")
	if err != nil {
		t.Fatalf("decode: %v", err)
	}
	results := qos.CompileAll(in)
	f := newFixture(t)
	created := map[string]bool{testSwitch: true}
	for _, r := range results {
		if r.Err != nil || r.Accepted.Status != "True" || len(r.QoS) == 0 {
			t.Fatalf("compile %s: accepted=%+v err=%v rows=%d; the fixture expects accepted objects with rows", r.Key(), r.Accepted, r.Err, len(r.QoS))
		}
		switchOf := map[string]string{}
		for _, n := range r.Networks {
			switchOf[n.Name] = n.Switch
			if !created[n.Switch] {
				f.Srv.MustNBCtl("ls-add", n.Switch)
				created[n.Switch] = true
			}
		}
		for _, pg := range r.PortGroups {
			for _, p := range pg.Ports {
				if !f.C.HasPort(p) {
					f.Srv.MustAddPorts(t, switchOf[pg.ExternalIDs[qos.NetworkKey]], p)
					f.waitPort(p)
				}
			}
		}
	}
	for _, r := range results {
		key := ovnnb.Key{Namespace: r.Namespace, Name: r.Name}
		var res ovnnb.ApplyResult
		f.waitUntil("switches of "+r.Key()+" in the cache", func() bool {
			res, err = f.C.Apply(f.Ctx, key, ovnnb.ObjectRows{PortGroups: r.PortGroups, AddressSets: r.AddressSets, QoS: r.QoS})
			return !errors.Is(err, ovnnb.ErrMissingSwitch)
		})
		if err != nil || len(res.MissingPorts) > 0 {
			t.Fatalf("Apply(%s) = %+v, %v", key, res, err)
		}
	}
	want, got := qos.Assemble(results), f.rows()
	for _, d := range []*qos.Desired{&want, &got} {
		normalizeDesired(d)
	}
	if !reflect.DeepEqual(got.PortGroups, want.PortGroups) || !reflect.DeepEqual(got.AddressSets, want.AddressSets) ||
		!reflect.DeepEqual(got.QoS, want.QoS) {
		t.Fatalf("Rows() differs from the compiler's output\n got %+v\nwant %+v", got, want)
	}
	if len(want.AddressSets) == 0 {
		t.Fatal("fixture should produce a destination address set")
	}
	f.requireConsistent()
	for _, r := range results {
		if err := f.C.Teardown(f.Ctx, ovnnb.Key{Namespace: r.Namespace, Name: r.Name}); err != nil {
			t.Fatalf("Teardown(%s): %v", r.Key(), err)
		}
	}
	if keys := f.ownedKeys(); len(keys) != 0 {
		t.Fatalf("OwnedKeys after teardown = %v", keys)
	}
}

// normalizeDesired sorts members and rows the same way on both sides.
func normalizeDesired(d *qos.Desired) {
	for i := range d.PortGroups {
		d.PortGroups[i].Ports = sortedCopy(d.PortGroups[i].Ports)
	}
	for i := range d.AddressSets {
		d.AddressSets[i].Addresses = sortedCopy(d.AddressSets[i].Addresses)
	}
	sort.Slice(d.QoS, func(i, j int) bool {
		a, b := d.QoS[i], d.QoS[j]
		if a.Switch != b.Switch {
			return a.Switch < b.Switch
		}
		return a.ExternalIDs[qos.PrimaryIDKey] < b.ExternalIDs[qos.PrimaryIDKey]
	})
}
