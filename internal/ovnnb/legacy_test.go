package ovnnb_test

import (
	"fmt"
	"maps"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/nqos/nqos/internal/ovnnb"
	"github.com/nqos/nqos/internal/ovnnb/nbtest"
	"github.com/nqos/nqos/internal/qos"
)

// extArgs spells external_ids for ovn-nbctl create.
func extArgs(ext map[string]string) []string { return nbtest.ExtArgs(ext) }

// upstreamSet is an upstream address set of ns1/gold: rule "src" or a
// rule index, as upstream's GetNetworkQoSAddrSetDbIDs names it.
func upstreamSet(key ovnnb.Key, ruleIdx, family string) (string, map[string]string) {
	id := fmt.Sprintf("%s-network-controller:NetworkQoS:%s:%s:%s:0:%s", testNet, key.Namespace, key.Name, ruleIdx, family)
	ext := upstreamIDs(key, id)
	delete(ext, qos.NetworkKey) // upstream's address sets carry no network key
	ext[qos.RuleIndexKey], ext[qos.IPBlockIndexKey], ext[qos.IPFamilyKey] = ruleIdx, "0", family
	return hashName(id), ext
}

// upstreamIDs are the external_ids OVN-Kubernetes's NetworkQoS controller
// writes on a row of key on the test network with k8s.ovn.org/id id.
func upstreamIDs(key ovnnb.Key, id string) map[string]string {
	ext := ids(key, id)
	ext[qos.OwnerControllerKey] = qos.OVNKubeControllerName(testNet)
	return ext
}

// adoptedIDs are upstream external_ids after AdoptEarlierRows.
func adoptedIDs(ext map[string]string) map[string]string {
	out := maps.Clone(ext)
	out[qos.OwnerControllerKey] = qos.ControllerName(testNet)
	out[qos.NetworkKey] = testNet
	out[qos.PrimaryIDKey] = qos.ControllerName(testNet) + strings.TrimPrefix(ext[qos.PrimaryIDKey], qos.OVNKubeControllerName(testNet))
	return out
}

// legacyFixture is an NB as upstream's address-set-based controller
// leaves it for ns1/gold.
type legacyFixture struct {
	src4, src6, dst, nsSet string
	qosExt                 []map[string]string
	matches                []string
}

func seedLegacy(f *fixture, key ovnnb.Key) legacyFixture {
	f.T.Helper()
	var l legacyFixture
	var ext4, ext6, extDst map[string]string
	l.src4, ext4 = upstreamSet(key, "src", "v4")
	l.src6, ext6 = upstreamSet(key, "src", "v6")
	l.dst, extDst = upstreamSet(key, "0", "v4")
	l.nsSet = "a_ns1_namespace_v4"
	args := []string{}
	for _, s := range []struct {
		name, addr string
		ext        map[string]string
	}{
		{l.src4, "10.50.0.4", ext4}, {l.src6, "fd00::4", ext6}, {l.dst, "10.60.0.9", extDst},
		{l.nsSet, "10.50.0.5", map[string]string{qos.OwnerTypeKey: "Namespace", qos.ObjectNameKey: "ns1"}},
	} {
		args = append(args, "--", "create", "Address_Set", "name="+s.name, fmt.Sprintf(`addresses="%s"`, s.addr))
		args = append(args, extArgs(s.ext)...)
	}
	l.matches = []string{
		"ip4.src == {$" + l.src4 + "} && ip4.dst == {$" + l.dst + "} && tcp && tcp.dst == 80",
		"(ip4.src == {$" + l.src4 + "} || ip6.src == {$" + l.src6 + "})",
		"ip4.src == {$" + l.nsSet + "} && ip4.dst == 192.0.2.0/24 && ip4.dst != {192.0.2.1,192.0.2.2}",
	}
	for i, m := range l.matches {
		ext := upstreamIDs(key, fmt.Sprintf("%s-network-controller:NetworkQoS:%s:%s:%d", testNet, key.Namespace, key.Name, i))
		ext[qos.RuleIndexKey] = fmt.Sprint(i)
		l.qosExt = append(l.qosExt, adoptedIDs(ext))
		ref := fmt.Sprintf("@q%d", i)
		args = append(args, "--", "--id="+ref, "create", "QoS", fmt.Sprintf("priority=%d", 10600+i),
			"direction=to-lport", fmt.Sprintf("match=%q", m), fmt.Sprintf("action:dscp=%d", 46-i))
		if i == 0 {
			args = append(args, "bandwidth:rate=20000", "bandwidth:burst=100")
		}
		args = append(args, extArgs(ext)...)
		args = append(args, "--", "add", "Logical_Switch", testSwitch, "qos_rules", ref)
	}
	f.Srv.MustNBCtl(args...)
	// ovn-nbctl wrote through its own connection: wait until the client's
	// cache holds the rows (and their switch references), adopt them as a
	// controller without OVN-Kubernetes's NetworkQoS does at startup, and
	// wait until the cache shows them adopted.
	f.waitUntil("the upstream rows in the client's cache", func() bool {
		rows, err := f.C.ForeignNetworkQoS(f.Ctx, nil)
		return err == nil && len(rows) == len(l.matches)
	})
	if res, err := f.C.AdoptEarlierRows(f.Ctx, true); err != nil || res.QoS != len(l.matches) || res.AddressSets != 3 {
		f.T.Fatalf("AdoptEarlierRows = %+v, %v; want %d QoS rows and 3 address sets", res, err, len(l.matches))
	}
	f.waitUntil("the legacy rows in the client's cache", func() bool {
		rows, err := f.C.LegacyRows(f.Ctx)
		return err == nil && len(rows) == len(l.matches) && len(rows[0].Switches) == 1
	})
	return l
}

// TestMigrateLegacy: upstream-style rows get a source port group and a
// port-group match, destinations/actions/bandwidth stay byte for byte,
// legacy NetworkQoS source sets go once unreferenced (other owners' sets
// stay), no committed state has a dangling reference, and a rerun is a
// no-op.
func TestMigrateLegacy(t *testing.T) {
	f := newFixture(t, "p1", "p2")
	key := ovnnb.Key{Namespace: "ns1", Name: "gold"}
	l := seedLegacy(f, key)
	before := f.state()
	w := watchRefs(t, f.Srv)

	rows := f.legacyRows()
	if len(rows) != 3 {
		t.Fatalf("LegacyRows = %+v, want 3 rows", rows)
	}
	wantSets := [][]string{{l.src4}, {l.src4, l.src6}, {l.nsSet}}
	for i, r := range rows {
		if r.Key != key || r.RuleIndex != fmt.Sprint(i) || r.Match != l.matches[i] ||
			!reflect.DeepEqual(r.Switches, []string{testSwitch}) || !reflect.DeepEqual(r.SourceSets, wantSets[i]) {
			t.Fatalf("LegacyRows[%d] = %+v, want rule %d of %s on %s with sets %v", i, r, i, key, testSwitch, wantSets[i])
		}
	}
	pg := object(key, 60, []string{"p1", "p2", "p-not-yet"}).PortGroups[0]
	wantMatches := []string{
		"inport == @" + pg.Name + " && ip4.dst == {$" + l.dst + "} && tcp && tcp.dst == 80",
		"inport == @" + pg.Name + " && (ip4 || ip6)",
		"inport == @" + pg.Name + " && ip4.dst == 192.0.2.0/24 && ip4.dst != {192.0.2.1,192.0.2.2}",
	}
	wantDeleted := [][]string{nil, sortedCopy([]string{l.src4, l.src6}), nil}
	for i, r := range rows {
		res, err := f.C.MigrateLegacy(f.Ctx, r, pg)
		if err != nil {
			t.Fatalf("MigrateLegacy(rule %d): %v", i, err)
		}
		wantTx := 1 + min(len(wantDeleted[i]), 1)
		if !res.Rewritten || res.NewMatch != wantMatches[i] || !reflect.DeepEqual(res.DeletedSets, wantDeleted[i]) ||
			res.Transactions != wantTx || !reflect.DeepEqual(res.MissingPorts, []string{"p-not-yet"}) {
			t.Fatalf("MigrateLegacy(rule %d) = %+v\nwant match %q, deleted %v, %d transactions, missing [p-not-yet]",
				i, res, wantMatches[i], wantDeleted[i], wantTx)
		}
	}
	w.until(t, "source sets deleted", func() bool { return len(w.names["Address_Set"]) == 2 })
	checkMigrated(t, before, f.state(), l, wantMatches, pg)
	f.requireConsistent()

	if again := f.legacyRows(); len(again) != 0 {
		t.Fatalf("LegacyRows after migration = %+v, want none", again)
	}
	after := f.state()
	for i, r := range rows {
		res, err := f.C.MigrateLegacy(f.Ctx, r, pg)
		if err != nil || res.Rewritten || res.Transactions != 0 || len(res.DeletedSets) > 0 || res.NewMatch != wantMatches[i] {
			t.Fatalf("second MigrateLegacy(rule %d) = %+v, %v; want a no-op", i, res, err)
		}
	}
	if again := f.state(); !reflect.DeepEqual(again, after) {
		t.Fatalf("second migration changed the NB")
	}
}

// checkMigrated compares each QoS row before and after: same UUID, switch,
// priority, action, bandwidth, external_ids; only the match changed.
func checkMigrated(t *testing.T, before, after nbState, l legacyFixture, wantMatches []string, pg qos.PortGroup) {
	t.Helper()
	for i, ext := range l.qosExt {
		id := ext[qos.PrimaryIDKey]
		b, _ := before.qosByID(id)
		a, ok := after.qosByID(id)
		if !ok {
			t.Fatalf("QoS %s gone after migration", id)
		}
		want := b
		want.Match = wantMatches[i]
		if !reflect.DeepEqual(a, want) || !reflect.DeepEqual(after.switchesOf(a.UUID), []string{testSwitch}) {
			t.Fatalf("QoS %s after migration = %+v on %v\nwant %+v on [%s]", id, a, after.switchesOf(a.UUID), want, testSwitch)
		}
	}
	got, ok := after.pg(pg.Name)
	if !ok || after.portNamesOf(got) != "p1,p2" || !maps.Equal(got.ExternalIDs, pg.ExternalIDs) {
		t.Fatalf("port group after migration = %+v (ports %s), want %s with p1,p2", got, after.portNamesOf(got), pg.Name)
	}
	var names []string
	for _, as := range after.ASes {
		names = append(names, as.Name)
	}
	sort.Strings(names)
	if want := sortedCopy([]string{l.dst, l.nsSet}); !reflect.DeepEqual(names, want) {
		t.Fatalf("address sets after migration = %v, want %v (destination and namespace sets kept)", names, want)
	}
}
