package ovnnb_test

import (
	"reflect"
	"slices"
	"testing"

	"github.com/nqos/nqos/internal/ovnnb"
)

// announcements collects the names a switch or port callback
// (OnLogicalSwitchAdd, OnLogicalSwitchPortAdd) announces, in order.
type announcements chan string

// until drains announcements until name arrives and appends every name
// seen before it to before (if not nil); ok is false if name has not
// been announced yet.
func (a announcements) until(name string, before *[]string) bool {
	for {
		select {
		case got := <-a:
			if got == name {
				return true
			}
			if before != nil {
				*before = append(*before, got)
			}
		default:
			return false
		}
	}
}

// seen drains the announcements received so far and reports whether
// name was among them.
func (a announcements) seen(name string) bool { return a.until(name, nil) }

// TestPortRenamedInPlace: an LSP row renamed in place (the multi-chassis
// migration handover) is announced under its new name, HasPort follows
// the name, and the port group keeps the same row, so an Apply that now
// names the port by its new name finds it and changes nothing. A change
// that keeps the name is not announced.
func TestPortRenamedInPlace(t *testing.T) {
	const src, dst = "ns1.net1_ns1_virt-launcher-vm-src", "ns1.net1_ns1_virt-launcher-vm-dst"
	f := newFixture(t, src, "other")
	adds := make(announcements, 64)
	f.C.OnLogicalSwitchPortAdd(func(name string) { adds <- name })
	key := ovnnb.Key{Namespace: "ns1", Name: "mig"}
	both := object(key, 10, []string{src, dst}, rule{DSCP: 46})
	if res := f.Apply(key, both); !reflect.DeepEqual(res.MissingPorts, []string{dst}) {
		t.Fatalf("Apply before the rename = %+v, want MissingPorts [%s]", res, dst)
	}
	f.requireApplied(key, bridged(both, dst), dst)
	before := f.state()
	uuid := before.portUUID(t, src)

	f.Srv.MustNBCtl("set", "Logical_Switch_Port", src, "name="+dst, "external_ids:pod=true")
	// The initial rows may be announced first (cache events are
	// asynchronous); only dst matters here.
	var earlier []string
	f.waitUntil("OnLogicalSwitchPortAdd("+dst+") after the rename", func() bool { return adds.until(dst, &earlier) })
	if !f.C.HasPort(dst) || f.C.HasPort(src) {
		t.Fatalf("after the rename HasPort(%s)=%v HasPort(%s)=%v, want true, false", dst, f.C.HasPort(dst), src, f.C.HasPort(src))
	}
	after := f.state()
	if got := after.portUUID(t, dst); got != uuid {
		t.Fatalf("renamed port has UUID %s, want the same row %s", got, uuid)
	}
	pg := both.PortGroups[0].Name
	if got := after.groupPorts(t, pg); !slices.Equal(got, []string{uuid}) {
		t.Fatalf("port group %s holds %v after the rename, want [%s]", pg, got, uuid)
	}
	// Both pods still exist: the source pod's name is now the missing one
	// (it gets a bridge), and the group already holds the row (its bridge
	// goes): the membership itself is not touched.
	if res := f.Apply(key, both); !reflect.DeepEqual(res.MissingPorts, []string{src}) || !reflect.DeepEqual(res.Bridged, []string{src}) {
		t.Fatalf("Apply after the rename = %+v, want MissingPorts and Bridged [%s]", res, src)
	}
	f.requireApplied(key, bridged(both, src), src)
	if got := f.state().groupPorts(t, pg); !slices.Equal(got, []string{uuid}) {
		t.Fatalf("port group %s holds %v after the apply, want [%s]", pg, got, uuid)
	}
	// Source pod deleted: only the new name is wanted.
	onlyDst := object(key, 10, []string{dst}, rule{DSCP: 46})
	if res := f.Apply(key, onlyDst); len(res.MissingPorts) > 0 || len(res.Bridged) > 0 {
		t.Fatalf("Apply with the target name only = %+v, want nothing missing and no bridge", res)
	}
	f.requireApplied(key, onlyDst)

	// An update that keeps the name is not an appearance.
	f.Srv.MustNBCtl("set", "Logical_Switch_Port", dst, "external_ids:namespace=ns1")
	f.Srv.MustNBCtl("lsp-add", testSwitch, "marker")
	earlier = nil
	f.waitUntil("OnLogicalSwitchPortAdd(marker)", func() bool { return adds.until("marker", &earlier) })
	if len(earlier) > 0 {
		t.Errorf("an external_ids update announced %v, want nothing", earlier)
	}
}

// portUUID returns the UUID of the LSP named name.
func (s nbState) portUUID(t *testing.T, name string) string {
	t.Helper()
	for uuid, n := range s.Ports {
		if n == name {
			return uuid
		}
	}
	t.Fatalf("no LSP %s in the NB", name)
	return ""
}

// groupPorts returns the port UUIDs of the port group named name.
func (s nbState) groupPorts(t *testing.T, name string) []string {
	t.Helper()
	pg, ok := s.pg(name)
	if !ok {
		t.Fatalf("no port group %s in the NB", name)
	}
	return sortedCopy(pg.Ports)
}
