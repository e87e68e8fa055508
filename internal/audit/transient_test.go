package audit

import (
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/nqos/nqos/internal/qos"
)

// firstMember is a port of a port group of d and the groups holding it.
func firstMember(t *testing.T, d qos.Desired) (string, []string) {
	t.Helper()
	for _, pg := range d.PortGroups {
		if len(pg.Ports) == 0 {
			continue
		}
		port := pg.Ports[0]
		var groups []string
		for _, g := range d.PortGroups {
			if slices.Contains(g.Ports, port) {
				groups = append(groups, g.Name)
			}
		}
		return port, groups
	}
	t.Fatal("no port-group member")
	return "", nil
}

func withoutPort(ports []string, port string) []string {
	return slices.DeleteFunc(slices.Clone(ports), func(p string) bool { return p == port })
}

func kinds(fs []Finding) []Kind {
	var out []Kind
	for _, f := range fs {
		out = append(out, f.Kind)
	}
	return out
}

// TestBridgingRowsAreNotDrift: a selected pod whose LSP does not exist
// yet is no member, and its port-group rows have the controller's
// bridging rows naming it: clean. A bridge that differs, is missing, or
// outlives the port's joining is drift.
func TestBridgingRowsAreNotDrift(t *testing.T) {
	want := Expect(input(t, "story1-tiers.yaml"), ZoneOf(""), qos.ScopeAllNetworks, nil)
	port, groups := firstMember(t, want.Rows)
	joining := map[string][]string{}
	for _, g := range groups {
		joining[g] = []string{port}
	}
	bridges := qos.BridgeRows(want.Rows.QoS, joining, func(qos.QoSRow) bool { return true })
	if len(bridges) == 0 {
		t.Fatal("no bridging row")
	}
	bridging := func() Actual {
		got := held(t, want.Rows)
		got.Ports = withoutPort(got.Ports, port)
		for i := range got.Owned.PortGroups {
			got.Owned.PortGroups[i].Ports = withoutPort(got.Owned.PortGroups[i].Ports, port)
		}
		got.Owned.QoS = append(got.Owned.QoS, clone(t, qos.Desired{QoS: bridges}).QoS...)
		return got
	}
	if fs := Compare("global", want, bridging()); len(fs) != 0 {
		t.Fatalf("port %s bridged before its LSP exists: %v", port, fs)
	}
	got := bridging()
	got.Owned.QoS[len(got.Owned.QoS)-1].Action.DSCP = 63
	if fs := Compare("global", want, got); !slices.Equal(kinds(fs), []Kind{DifferentQoS}) {
		t.Errorf("bridge with DSCP 63: %v", fs)
	}
	got = bridging()
	got.Owned.QoS = got.Owned.QoS[:len(got.Owned.QoS)-1]
	if fs := Compare("global", want, got); !slices.Equal(kinds(fs), []Kind{MissingQoS}) {
		t.Errorf("bridge deleted: %v", fs)
	}
	// The LSP exists and the port is a member: its bridges are extra.
	got = held(t, want.Rows)
	got.Owned.QoS = append(got.Owned.QoS, clone(t, qos.Desired{QoS: bridges}).QoS...)
	fs := Compare("global", want, got)
	if len(fs) != len(bridges) || slices.ContainsFunc(fs, func(f Finding) bool { return f.Kind != ExtraQoS }) {
		t.Errorf("bridges of a member: %v, want %d ExtraQoS", fs, len(bridges))
	}
}

// TestDepartingPortsAreNotDrift: a port whose pod is gone (or
// terminating) keeps its membership while its LSP exists: clean. Once the
// LSP is gone, or while the pod is there and no longer selected, the
// membership is drift.
func TestDepartingPortsAreNotDrift(t *testing.T) {
	in := input(t, "story1-tiers.yaml")
	before := Expect(in, ZoneOf(""), qos.ScopeAllNetworks, nil)
	port, groups := firstMember(t, before.Rows)
	ns, name, ok := qos.PodOfPort(port)
	if !ok {
		t.Fatalf("port %s names no pod", port)
	}
	isPod := func(p *corev1.Pod) bool { return p.Namespace == ns && p.Name == name }
	gone := in
	gone.Pods = slices.DeleteFunc(slices.Clone(in.Pods), isPod)
	want := Expect(gone, ZoneOf(""), qos.ScopeAllNetworks, nil)
	if fs := Compare("global", want, held(t, before.Rows)); len(fs) != 0 {
		t.Fatalf("pod %s/%s gone, its LSP there: %v", ns, name, fs)
	}
	terminating := withPod(in, isPod, func(q *corev1.Pod) {
		q.Labels = nil
		now := q.CreationTimestamp
		q.DeletionTimestamp = &now
	})
	if fs := Compare("global", Expect(terminating, ZoneOf(""), qos.ScopeAllNetworks, nil), held(t, before.Rows)); len(fs) != 0 {
		t.Errorf("pod %s/%s terminating and unselected, its LSP there: %v", ns, name, fs)
	}
	lspGone := held(t, before.Rows)
	lspGone.Ports = withoutPort(lspGone.Ports, port)
	if fs := Compare("global", want, lspGone); len(fs) != len(groups) || fs[0].Kind != ExtraMember {
		t.Errorf("pod and LSP gone, membership kept: %v, want %d ExtraMember", fs, len(groups))
	}
	unselected := withPod(in, isPod, func(q *corev1.Pod) { q.Labels = nil })
	fs := Compare("global", Expect(unselected, ZoneOf(""), qos.ScopeAllNetworks, nil), held(t, before.Rows))
	if len(fs) != len(groups) || slices.ContainsFunc(fs, func(f Finding) bool { return f.Kind != ExtraMember }) {
		t.Errorf("pod there, no longer selected, membership kept: %v, want %d ExtraMember", fs, len(groups))
	}
}

// withPod is in with the pods is selects changed by change (copies).
func withPod(in qos.Input, is func(*corev1.Pod) bool, change func(*corev1.Pod)) qos.Input {
	out := in
	out.Pods = slices.Clone(in.Pods)
	for i, p := range out.Pods {
		if is(p) {
			q := p.DeepCopy()
			change(q)
			out.Pods[i] = q
		}
	}
	return out
}
