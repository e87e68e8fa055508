package ovnnb_test

import (
	"context"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"

	"github.com/nqos/nqos/internal/ovnnb"
	"github.com/nqos/nqos/internal/ovnnb/nbtest"
	"github.com/nqos/nqos/internal/qos"
)

func sortedCopy(s []string) []string {
	out := slices.Clone(s)
	slices.Sort(out)
	return out
}

// ownedBy reports whether external_ids belong to key.
func ownedBy(ext map[string]string, key ovnnb.Key) bool {
	return ovnnb.IsOwned(ext) && ext[qos.ObjectNameKey] == key.Namespace+":"+key.Name
}

// diffApplied lists every difference between the NB (read with
// ovn-nbctl) and want for key; missing ports are expected to be absent.
func diffApplied(s nbState, key ovnnb.Key, want ovnnb.ObjectRows, missing ...string) []string {
	var d []string
	for _, w := range want.PortGroups {
		pg, ok := s.pg(w.Name)
		if !ok {
			d = append(d, "port group "+w.Name+" missing")
			continue
		}
		var ports []string
		for _, p := range w.Ports {
			if !slices.Contains(missing, p) {
				ports = append(ports, p)
			}
		}
		if got, exp := s.portNamesOf(pg), strings.Join(sortedCopy(ports), ","); got != exp {
			d = append(d, fmt.Sprintf("port group %s ports %q, want %q", w.Name, got, exp))
		}
		if !maps.Equal(pg.ExternalIDs, w.ExternalIDs) {
			d = append(d, fmt.Sprintf("port group %s external_ids %v, want %v", w.Name, pg.ExternalIDs, w.ExternalIDs))
		}
	}
	for _, w := range want.AddressSets {
		as, ok := s.as(w.Name)
		switch {
		case !ok:
			d = append(d, "address set "+w.Name+" missing")
		case !slices.Equal(as.Addresses, sortedCopy(w.Addresses)) || !maps.Equal(as.ExternalIDs, w.ExternalIDs):
			d = append(d, fmt.Sprintf("address set %s = %v %v, want %v %v", w.Name, as.Addresses, as.ExternalIDs, w.Addresses, w.ExternalIDs))
		}
	}
	for _, w := range want.QoS {
		d = append(d, diffQoS(s, w)...)
	}
	return append(d, diffCounts(s, key, want)...)
}

func diffQoS(s nbState, w qos.QoSRow) []string {
	id := w.ExternalIDs[qos.PrimaryIDKey]
	q, ok := s.qosByID(id)
	if !ok {
		return []string{"QoS " + id + " missing"}
	}
	var d []string
	wantBW := map[string]int{}
	if w.Bandwidth != nil && w.Bandwidth.Rate > 0 {
		wantBW["rate"] = int(w.Bandwidth.Rate)
	}
	if w.Bandwidth != nil && w.Bandwidth.Burst > 0 {
		wantBW["burst"] = int(w.Bandwidth.Burst)
	}
	got := fmt.Sprintf("%s %d %q dscp=%d bw=%v", q.Direction, q.Priority, q.Match, q.Action["dscp"], q.Bandwidth)
	exp := fmt.Sprintf("%s %d %q dscp=%d bw=%v", w.Direction, w.Priority, w.Match, w.Action.DSCP, wantBW)
	if got != exp || len(q.Action) != 1 {
		d = append(d, fmt.Sprintf("QoS %s = %s (action %v), want %s", id, got, q.Action, exp))
	}
	if !maps.Equal(q.ExternalIDs, w.ExternalIDs) {
		d = append(d, fmt.Sprintf("QoS %s external_ids %v, want %v", id, q.ExternalIDs, w.ExternalIDs))
	}
	if sw := s.switchesOf(q.UUID); !reflect.DeepEqual(sw, []string{w.Switch}) {
		d = append(d, fmt.Sprintf("QoS %s on switches %v, want [%s]", id, sw, w.Switch))
	}
	return d
}

// diffCounts catches extra owned rows of key.
func diffCounts(s nbState, key ovnnb.Key, want ovnnb.ObjectRows) []string {
	var nq, npg, nas int
	for _, q := range s.QoS {
		if ownedBy(q.ExternalIDs, key) {
			nq++
		}
	}
	for _, p := range s.PGs {
		if ownedBy(p.ExternalIDs, key) {
			npg++
		}
	}
	for _, a := range s.ASes {
		if ownedBy(a.ExternalIDs, key) {
			nas++
		}
	}
	got := fmt.Sprintf("%d QoS, %d port groups, %d address sets", nq, npg, nas)
	exp := fmt.Sprintf("%d QoS, %d port groups, %d address sets", len(want.QoS), len(want.PortGroups), len(want.AddressSets))
	if got != exp {
		return []string{fmt.Sprintf("object %s owns %s, want %s", key, got, exp)}
	}
	return nil
}

func (f *fixture) requireApplied(key ovnnb.Key, want ovnnb.ObjectRows, missing ...string) {
	f.T.Helper()
	if d := diffApplied(f.state(), key, want, missing...); len(d) > 0 {
		f.T.Fatalf("NB differs from want for %s:\n  %s", key, strings.Join(d, "\n  "))
	}
	f.requireConsistent()
}

// requireConsistent fails on a broken NB invariant, read with ovn-nbctl:
// an owned QoS row referencing a missing port group or address set, or
// on no logical switch.
func (f *fixture) requireConsistent() {
	f.T.Helper()
	if v := brokenRefs(f.state()); len(v) > 0 {
		f.T.Fatalf("NB invariants broken:\n  %s", strings.Join(v, "\n  "))
	}
}

func brokenRefs(s nbState) []string {
	var out []string
	for _, q := range s.QoS {
		if q.ExternalIDs[qos.OwnerTypeKey] != qos.OwnerType {
			continue
		}
		id := q.ExternalIDs[qos.PrimaryIDKey]
		for _, pg := range nbtest.Refs(q.Match, "@") {
			if _, ok := s.pg(pg); !ok {
				out = append(out, fmt.Sprintf("QoS %s references missing port group @%s", id, pg))
			}
		}
		for _, as := range nbtest.Refs(q.Match, "$") {
			_, isSet := s.as(as)
			_, isImplicit := s.pg(strings.TrimSuffix(strings.TrimSuffix(as, "_ip4"), "_ip6"))
			if !isSet && !isImplicit {
				out = append(out, fmt.Sprintf("QoS %s references missing address set $%s", id, as))
			}
		}
		if len(s.switchesOf(q.UUID)) == 0 {
			out = append(out, fmt.Sprintf("QoS %s is on no logical switch", id))
		}
	}
	return out
}

// mustRead returns what read returns; a failed read fails the test.
func mustRead[T any](f *fixture, read func(context.Context) (T, error)) T {
	f.T.Helper()
	v, err := read(f.Ctx)
	if err != nil {
		f.T.Fatal(err)
	}
	return v
}

// rows is Client.Rows; a failed read fails the test.
func (f *fixture) rows() qos.Desired {
	f.T.Helper()
	return mustRead(f, f.C.Rows)
}

// ownedKeys is Client.OwnedKeys; a failed read fails the test.
func (f *fixture) ownedKeys() []ovnnb.Key {
	f.T.Helper()
	return mustRead(f, f.C.OwnedKeys)
}

// legacyRows is Client.LegacyRows; a failed read fails the test.
func (f *fixture) legacyRows() []ovnnb.LegacyRow {
	f.T.Helper()
	return mustRead(f, f.C.LegacyRows)
}
