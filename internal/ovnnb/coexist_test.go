package ovnnb_test

import (
	"fmt"
	"reflect"
	"slices"
	"testing"

	"github.com/nqos/nqos/internal/ovnnb"
	"github.com/nqos/nqos/internal/qos"
)

// ovnkubeObject is what OVN-Kubernetes's NetworkQoS controller writes for
// one object on a network, spelled as its network_qos package and
// libovsdb ops DbObjectIDs spell it: a source address set per IP family
// and a destination address set per selector destination (owner-type
// NetworkQoS, owner-controller "<controller>", name "<ns>:<name>",
// rule-index, ip-block-index, ip-family, k8s.ovn.org/id
// "<controller>:NetworkQoS:<ns>:<name>:<rule>:<dest>:<family>", named
// "a"+FNV-64a of the id, no network key), and a QoS row per rule
// (rule-index, k8s.ovn.org/id "<controller>:NetworkQoS:<ns>:<name>:<rule>",
// k8s.ovn.org/network for a user-defined network), priority
// 10000+priority*10+rule, to-lport, bound to the switch.
func ovnkubeObject(f *fixture, controller, network, sw, ns, name string, priority int) {
	f.T.Helper()
	obj := controller + ":" + qos.OwnerType + ":" + ns + ":" + name
	owner := map[string]string{qos.OwnerControllerKey: controller, qos.OwnerTypeKey: qos.OwnerType, qos.ObjectNameKey: ns + ":" + name}
	set := func(rule, dest, addr string) (string, []string) {
		id := obj + ":" + rule + ":" + dest + ":v4"
		ext := map[string]string{qos.PrimaryIDKey: id, qos.RuleIndexKey: rule, qos.IPBlockIndexKey: dest, qos.IPFamilyKey: "v4"}
		for k, v := range owner {
			ext[k] = v
		}
		return hashName(id), append([]string{"--", "create", "Address_Set", "name=" + hashName(id), fmt.Sprintf(`addresses="%s"`, addr)}, extArgs(ext)...)
	}
	src, args := set("src", "0", "10.50.0.4")
	dst, dstArgs := set("0", "0", "10.50.0.9")
	args = append(args, dstArgs...)
	for i, match := range []string{
		"ip4.src == {$" + src + "} && ip4.dst == {$" + dst + "}",
		"ip4.src == {$" + src + "} && ip4.dst == 10.0.0.0/8 && tcp && tcp.dst == 80",
	} {
		ext := map[string]string{qos.PrimaryIDKey: fmt.Sprintf("%s:%d", obj, i), qos.RuleIndexKey: fmt.Sprint(i)}
		for k, v := range owner {
			ext[k] = v
		}
		if network != "" {
			ext[qos.NetworkKey] = network
		}
		ref := fmt.Sprintf("@%s_%s_%d", controller[:1], name, i)
		args = append(args, "--", "--id="+ref, "create", "QoS", fmt.Sprintf("priority=%d", 10000+priority*10+i),
			"direction=to-lport", fmt.Sprintf("match=%q", match), fmt.Sprintf("action:dscp=%d", 20+i), "bandwidth:rate=20000")
		args = append(args, extArgs(ext)...)
		args = append(args, "--", "add", "Logical_Switch", sw, "qos_rules", ref)
	}
	f.Srv.MustNBCtl(args...)
}

// TestCoexistWithOvnkubeRows: rows OVN-Kubernetes's own NetworkQoS
// controller wrote (on nqos's switch for the very object nqos serves and
// for an object nqos does not know, and on the default network's node
// switch) survive nqos's apply, change and teardown of that object and
// the startup steps (adoption while OVN-Kubernetes's NetworkQoS runs,
// orphan GC, legacy migration), byte for byte with their bindings; they
// are reported by ForeignNetworkQoS and none of them is nqos's.
func TestCoexistWithOvnkubeRows(t *testing.T) {
	f := newFixture(t, "p1", "p2")
	f.Srv.MustNBCtl("ls-add", "node1")
	key := ovnnb.Key{Namespace: "ns1", Name: "gold"}
	ovnkubeObject(f, qos.OVNKubeControllerName(testNet), testNet, testSwitch, key.Namespace, key.Name, 60)
	ovnkubeObject(f, qos.OVNKubeControllerName(testNet), testNet, testSwitch, "ns1", "unknown", 61)
	ovnkubeObject(f, "default-network-controller", "", "node1", key.Namespace, key.Name, 60)
	f.waitUntil("OVN-Kubernetes's rows in the client's cache", func() bool {
		rows, err := f.C.ForeignNetworkQoS(f.Ctx, nil)
		return err == nil && len(rows) == 6
	})
	before := f.state()
	theirs := foreignOf(before)
	if len(theirs.QoS) != 6 || len(theirs.ASes) != 6 {
		t.Fatalf("seeded %d QoS rows and %d address sets of OVN-Kubernetes, want 6 and 6", len(theirs.QoS), len(theirs.ASes))
	}
	for _, q := range theirs.QoS {
		if got := ovnnb.ClassifyOwner(q.ExternalIDs); got == ovnnb.OwnerNQOS || !ovnnb.IsForeignNetworkQoS(q.ExternalIDs) {
			t.Fatalf("OVN-Kubernetes's row %v classified %d, foreign=%v", q.ExternalIDs, got, ovnnb.IsForeignNetworkQoS(q.ExternalIDs))
		}
	}

	// Same object, same switch, same priorities as OVN-Kubernetes's rows.
	f.objectLife(t, key, func(step string) {
		if got := foreignOf(f.state()); !reflect.DeepEqual(got, theirs) {
			t.Fatalf("%s changed OVN-Kubernetes's rows:\n got %+v\nwant %+v", step, got, theirs)
		}
	},
		namedStep{"adopt while OVN-Kubernetes's NetworkQoS runs", func() error {
			res, err := f.C.AdoptEarlierRows(f.Ctx, false)
			if err == nil && res.Total() != 0 {
				err = fmt.Errorf("adopted %+v of OVN-Kubernetes's rows", res)
			}
			return err
		}},
		namedStep{"startup GC", func() error {
			keys, err := f.C.OwnedKeys(f.Ctx)
			if err != nil {
				return err
			}
			if !reflect.DeepEqual(keys, []ovnnb.Key{key}) {
				return fmt.Errorf("OwnedKeys = %v, want only %v", keys, key)
			}
			_, err = f.C.TeardownBatch(f.Ctx, slices.DeleteFunc(keys, func(k ovnnb.Key) bool { return k == key }))
			return err
		}},
		namedStep{"legacy rows", func() error {
			rows, err := f.C.LegacyRows(f.Ctx)
			if err == nil && len(rows) != 0 {
				err = fmt.Errorf("LegacyRows = %+v, want none (the address-set rows are OVN-Kubernetes's)", rows)
			}
			return err
		}},
	)
	if d := diffCounts(f.state(), key, ovnnb.ObjectRows{}); len(d) > 0 {
		t.Fatalf("teardown left nqos rows: %v", d)
	}
	on, err := f.C.ForeignNetworkQoS(f.Ctx, []string{testSwitch})
	if err != nil {
		t.Fatal(err)
	}
	if len(on) != 4 {
		t.Fatalf("ForeignNetworkQoS(%s) = %v, want OVN-Kubernetes's 4 rows there", testSwitch, on)
	}
	for _, r := range on {
		if r.Controller != qos.OVNKubeControllerName(testNet) || r.Switch != testSwitch {
			t.Fatalf("foreign row %v: want controller %s on %s", r, qos.OVNKubeControllerName(testNet), testSwitch)
		}
	}
}

// TestAdoptEarlierNQOSRows: rows an nqos version before its own key wrote
// (OVN-Kubernetes's controller name, a port-group source) are adopted
// while OVN-Kubernetes's NetworkQoS runs, and the next Apply moves them to
// the wanted rows in place of new ones; an earlier-key address set, which
// OVN-Kubernetes's controller could own under the very same name, is
// left alone.
func TestAdoptEarlierNQOSRows(t *testing.T) {
	f := newFixture(t, "p1", "p2")
	key := ovnnb.Key{Namespace: "ns1", Name: "gold"}
	old := qos.OVNKubeControllerName(testNet)
	obj := old + ":" + qos.OwnerType + ":ns1:gold"
	ext := func(id string, more ...string) []string {
		m := map[string]string{qos.OwnerControllerKey: old, qos.OwnerTypeKey: qos.OwnerType, qos.ObjectNameKey: "ns1:gold",
			qos.NetworkKey: testNet, qos.PrimaryIDKey: id}
		for i := 0; i+1 < len(more); i += 2 {
			m[more[i]] = more[i+1]
		}
		return extArgs(m)
	}
	pg, as := hashName(obj), hashName(obj+":0:0:v4")
	args := append([]string{"--", "pg-add", pg, "p1", "--", "set", "Port_Group", pg}, ext(obj)...)
	args = append(args, "--", "create", "Address_Set", "name="+as, `addresses="10.9.9.9"`)
	args = append(args, ext(obj+":0:0:v4", qos.RuleIndexKey, "0", qos.IPBlockIndexKey, "0", qos.IPFamilyKey, "v4")...)
	args = append(args, "--", "--id=@q", "create", "QoS", "priority=10600", "direction=to-lport",
		fmt.Sprintf(`match="inport == @%s && ip4.dst == {$%s}"`, pg, as), "action:dscp=46")
	args = append(args, ext(obj+":0", qos.RuleIndexKey, "0")...)
	args = append(args, "--", "add", "Logical_Switch", testSwitch, "qos_rules", "@q")
	f.Srv.MustNBCtl(args...)
	f.waitUntil("the earlier rows in the client's cache", func() bool {
		rows, err := f.C.ForeignNetworkQoS(f.Ctx, nil)
		return err == nil && len(rows) == 1
	})
	res, err := f.C.AdoptEarlierRows(f.Ctx, false)
	if err != nil || res.PortGroups != 1 || res.QoS != 1 || res.AddressSets != 0 {
		t.Fatalf("AdoptEarlierRows = %+v, %v; want the port group and the QoS row, no address set", res, err)
	}
	if keys := f.ownedKeys(); !reflect.DeepEqual(keys, []ovnnb.Key{key}) {
		t.Fatalf("OwnedKeys after adoption = %v, want [%v]", keys, key)
	}
	want := object(key, 60, []string{"p1", "p2"}, rule{DSCP: 46})
	f.Apply(key, want)
	s := f.state()
	if d := diffApplied(s, key, want); len(d) > 0 {
		t.Fatalf("after Apply: %v", d)
	}
	if d := diffCounts(s, key, want); len(d) > 0 {
		t.Fatalf("after Apply the adopted rows linger: %v", d)
	}
	if _, ok := s.as(as); !ok {
		t.Fatalf("earlier-key address set %s was deleted; it may be OVN-Kubernetes's", as)
	}
}
