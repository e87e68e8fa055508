package ovnnb_test

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/nqos/nqos/internal/ovnnb"
	"github.com/nqos/nqos/internal/qos"
)

// perPortManifests is an ipamless localnet network on the fixture's
// switch, a per-port NetworkQoS (rule 0 marking only, rule 1 capped) and
// one launcher pod per name in pods, all on node n1.
func perPortManifests(pods ...string) string {
	y := `apiVersion: k8s.cni.cncf.io/v1
kind: NetworkAttachmentDefinition
metadata: { name: tenantblue, namespace: vms, labels: { qos: "on" } }
spec:
  config: '{"cniVersion":"1.0.0","name":"` + testNet + `","type":"ovn-k8s-cni-overlay","topology":"localnet","netAttachDefName":"vms/tenantblue"}'
---
apiVersion: k8s.ovn.org/v1alpha1
kind: NetworkQoS
metadata:
  name: capped
  namespace: vms
  annotations: { ` + qos.BandwidthScopeAnnotation + `: ` + qos.BandwidthScopePerPort + ` }
spec:
  networkSelectors:
  - networkSelectionType: NetworkAttachmentDefinitions
    networkAttachmentDefinitionSelector: { namespaceSelector: {}, networkSelector: { matchLabels: { qos: "on" } } }
  podSelector: { matchLabels: { tier: capped } }
  priority: 50
  egress:
  - dscp: 18
  - dscp: 10
    bandwidth: { rate: 100000, burst: 5000 }
`
	for _, p := range pods {
		y += fmt.Sprintf(`---
apiVersion: v1
kind: Pod
metadata: { name: %s, namespace: vms, labels: { tier: capped }, annotations: { k8s.v1.cni.cncf.io/networks: tenantblue } }
spec: { nodeName: n1, containers: [ { name: c, image: x } ] }
`, p)
	}
	return y
}

func compilePerPort(t *testing.T, pods ...string) ovnnb.ObjectRows {
	t.Helper()
	in, err := qos.DecodeManifests(strings.NewReader(perPortManifests(pods...)), "per-port")
	if err != nil {
		t.Fatalf("decode: %v", err)
	}
	rs := qos.CompileAll(in)
	if len(rs) != 1 || rs[0].Err != nil || rs[0].Accepted.Status != "True" {
		t.Fatalf("compile: %+v", rs)
	}
	r := rs[0]
	if got := qos.PerPortRows(r.QoS); got != len(pods) {
		t.Fatalf("%d per-port rows for %d pods: %+v", got, len(pods), r.QoS)
	}
	return ovnnb.ObjectRows{PortGroups: r.PortGroups, AddressSets: r.AddressSets, QoS: r.QoS}
}

func lsp(pod string) string { return qos.LogicalPortName("vms", "tenantblue", "vms", pod) }

// TestPerPortRowsFollowPorts applies a per-port object's compiled rows
// to a real NB as its pods come and go: each pod's capped row is created
// and deleted with the pod in the object's one transaction, the
// marking-only rule keeps its port-group row, a pod whose LSP does not
// exist yet already has its named-port row (OVN resolves the name when
// the port appears) and a bridging row for the marking rule while the
// port group waits for it; the bridge stays while the port joins and goes
// in the next apply; an operator's row naming the same port is never
// touched.
func TestPerPortRowsFollowPorts(t *testing.T) {
	f := newFixture(t, lsp("vm-a"), lsp("vm-b"))
	key := ovnnb.Key{Namespace: "vms", Name: "capped"}
	f.nbctlSynced("--id=@q", "create", "QoS", "direction=to-lport", "priority=10501",
		`match="inport == \"`+lsp("vm-a")+`\""`, "action:dscp=8", "external_ids:owner=operator",
		"--", "add", "Logical_Switch", testSwitch, "qos_rules", "@q")
	foreign := operatorRows(t, f)

	c := lsp("vm-c")
	steps := []struct {
		name            string
		pods            []string
		missing, bridge []string
	}{
		{"two VMs", []string{"vm-a", "vm-b"}, nil, nil},
		{"vm-b gone, vm-c's pod before its LSP", []string{"vm-a", "vm-c"}, []string{c}, []string{c}},
		{"vm-c's LSP appears: it joins, its bridge stays", []string{"vm-a", "vm-c"}, nil, []string{c}},
		{"vm-c is a member: its bridge goes", []string{"vm-a", "vm-c"}, nil, nil},
	}
	var before map[string]string
	for i, st := range steps {
		if i == 2 {
			f.Srv.MustAddPorts(t, testSwitch, c)
			f.waitPort(c)
		}
		want := compilePerPort(t, st.pods...)
		res := f.Apply(key, want)
		if !res.Changed || strings.Join(res.MissingPorts, ",") != strings.Join(st.missing, ",") ||
			strings.Join(res.Bridged, ",") != strings.Join(st.bridge, ",") {
			t.Fatalf("%s: Apply = %+v, want Changed, missing %v, bridged %v", st.name, res, st.missing, st.bridge)
		}
		inNB := want
		for _, port := range st.bridge {
			inNB.QoS = append(slices.Clone(inNB.QoS), qos.BridgeRow(markingRow(t, want), port))
		}
		f.requireApplied(key, inNB, st.missing...)
		uuids := qosUUIDs(f.state(), key)
		if i == 2 && !maps.Equal(uuids, before) {
			t.Fatalf("%s: QoS rows changed when only the port appeared: %v -> %v", st.name, before, uuids)
		}
		before = uuids
		if got := operatorRows(t, f); !maps.Equal(got, foreign) {
			t.Fatalf("%s: the operator's row changed: %v -> %v", st.name, foreign, got)
		}
	}
	if again := f.Apply(key, compilePerPort(t, "vm-a", "vm-c")); again.Changed {
		t.Fatal("a further Apply committed a transaction")
	}
	if err := f.C.Teardown(f.Ctx, key); err != nil {
		t.Fatalf("Teardown: %v", err)
	}
	if d := diffCounts(f.state(), key, ovnnb.ObjectRows{}); len(d) > 0 {
		t.Fatalf("after teardown: %v", d)
	}
	if got := operatorRows(t, f); !maps.Equal(got, foreign) {
		t.Fatalf("teardown touched the operator's row: %v -> %v", foreign, got)
	}
}

// markingRow is the port-group row of want (rule 0, marking only).
func markingRow(t *testing.T, want ovnnb.ObjectRows) qos.QoSRow {
	t.Helper()
	for _, r := range want.QoS {
		if qos.SourceGroup(r) != "" {
			return r
		}
	}
	t.Fatalf("no port-group row in %+v", want.QoS)
	return qos.QoSRow{}
}

// operatorRows renders every QoS row nqos does not own, by UUID.
func operatorRows(t *testing.T, f *fixture) map[string]string {
	t.Helper()
	out := map[string]string{}
	s := f.state()
	for _, q := range s.QoS {
		if !ovnnb.IsOwned(q.ExternalIDs) {
			out[q.UUID] = fmt.Sprintf("%d %q %v %v %v %v", q.Priority, q.Match, q.Action, q.Bandwidth, q.ExternalIDs, s.switchesOf(q.UUID))
		}
	}
	if len(out) == 0 {
		t.Fatal("the operator's row is missing")
	}
	return out
}

// TestLingerKeepsDepartingPort: a port whose pod is gone keeps its
// port-group membership and per-port row while its LSP exists (no
// transaction at all); deleting the LSP drops it from the group in
// OVN's own transaction and the next apply deletes its row. Without
// Linger's consent (the pod is there, no longer selected) it leaves at
// once.
func TestLingerKeepsDepartingPort(t *testing.T) {
	a, b := lsp("vm-a"), lsp("vm-b")
	f := newFixture(t, a, b)
	key := ovnnb.Key{Namespace: "vms", Name: "capped"}
	f.Apply(key, compilePerPort(t, "vm-a", "vm-b"))
	both := f.state()

	gone := compilePerPort(t, "vm-b")
	gone.Linger = func(port string) bool { return port == a }
	res := f.Apply(key, gone)
	if res.Changed || strings.Join(res.Lingering, ",") != a {
		t.Fatalf("Apply with vm-a's pod gone = %+v, want no transaction and %s lingering", res, a)
	}
	if got := qosUUIDs(f.state(), key); !maps.Equal(got, qosUUIDs(both, key)) {
		t.Fatalf("rows changed while vm-a lingers: %v -> %v", qosUUIDs(both, key), got)
	}

	f.nbctlSynced("lsp-del", a)
	res = f.Apply(key, gone)
	if !res.Changed || len(res.Lingering) != 0 {
		t.Fatalf("Apply after vm-a's LSP was deleted = %+v, want its row deleted", res)
	}
	f.requireApplied(key, gone)

	f.Srv.MustAddPorts(t, testSwitch, a)
	f.waitPort(a)
	f.Apply(key, compilePerPort(t, "vm-a", "vm-b"))
	stays := compilePerPort(t, "vm-b")
	stays.Linger = func(string) bool { return false }
	if res := f.Apply(key, stays); !res.Changed || len(res.Lingering) != 0 {
		t.Fatalf("Apply with vm-a no longer selected = %+v, want it removed at once", res)
	}
	f.requireApplied(key, stays)
}
