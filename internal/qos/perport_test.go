package qos

import (
	"strings"
	"testing"

	"github.com/nqos/nqos/api/v1alpha1"
)

// story1Production is story1's tier-production object with a second,
// metered rule, under the given bandwidth scope ("" for no annotation).
func story1Production(t *testing.T, scope string) (*v1alpha1.NetworkQoS, Input) {
	t.Helper()
	f := openTestdata(t, "story1-tiers.yaml")
	in, err := DecodeManifests(f, "story1")
	if err != nil {
		t.Fatal(err)
	}
	var prod *v1alpha1.NetworkQoS
	for _, nq := range in.NetworkQoSes {
		if nq.Name == "tier-production" {
			prod = nq
		}
	}
	prod.Spec.Egress = append(prod.Spec.Egress, v1alpha1.Rule{DSCP: 10, Bandwidth: &v1alpha1.Bandwidth{Rate: 1000, Burst: 100}})
	if scope != "" {
		prod.Annotations = map[string]string{BandwidthScopeAnnotation: scope}
	}
	return prod, in
}

// withTwin adds virt-launcher-db-3, a twin of virt-launcher-db-1 on
// node-a, so two selected pods share node-a.
func withTwin(in Input) Input {
	for _, p := range in.Pods {
		if p.Name == "virt-launcher-db-1" {
			twin := p.DeepCopy()
			twin.Name = "virt-launcher-db-3"
			in.Pods = append(in.Pods, twin)
			break
		}
	}
	return in
}

// TestPerPortRows: a per-port object's metered rule is one row per
// selected port, at the rule's priority, with the rule's match, action
// and bandwidth after inport == "<lsp>"; its marking-only rule keeps the
// port-group row, and nothing is a shared cap.
func TestPerPortRows(t *testing.T) {
	prod, in := story1Production(t, BandwidthScopePerPort)
	in = withTwin(in)
	r := CompileObject(prod, NewSnapshot(in), "")
	if r.Err != nil || r.Accepted.Status != "True" {
		t.Fatalf("not accepted: %+v %v", r.Accepted, r.Err)
	}
	if len(r.PortGroups) != 1 || len(r.PortGroups[0].Ports) != 3 {
		t.Fatalf("port groups %+v, want one with 3 ports", r.PortGroups)
	}
	pg := r.PortGroups[0]
	if len(r.QoS) != 4 || PerPortRows(r.QoS) != 3 {
		t.Fatalf("rows %+v: want 1 port-group row + 3 per-port rows", r.QoS)
	}
	byPort := map[string]QoSRow{}
	for _, q := range r.QoS {
		if q.ExternalIDs[PortKey] == "" {
			if q.Match != "inport == @"+pg.Name+" && (ip4 || ip6)" || q.Bandwidth != nil || q.Priority != 10600 {
				t.Errorf("marking row %+v", q)
			}
			continue
		}
		byPort[q.ExternalIDs[PortKey]] = q
	}
	for _, port := range pg.Ports {
		q, ok := byPort[port]
		if !ok {
			t.Fatalf("no per-port row for %s in %+v", port, r.QoS)
		}
		if q.Match != `inport == "`+port+`" && (ip4 || ip6)` || q.Priority != 10601 || q.Action.DSCP != 10 ||
			q.Bandwidth == nil || *q.Bandwidth != (Bandwidth{Rate: 1000, Burst: 100}) {
			t.Errorf("per-port row %+v", q)
		}
		id := q.ExternalIDs[PrimaryIDKey]
		if !strings.HasPrefix(id, ControllerName(q.ExternalIDs[NetworkKey])+":NetworkQoS:prod-vms:tier-production:1:") ||
			!strings.HasSuffix(id, ":"+port) || q.ExternalIDs[RuleIndexKey] != "1" {
			t.Errorf("ids %v", q.ExternalIDs)
		}
	}
	if ws := warningsOf(r, WarningSharedCap); len(ws) != 0 {
		t.Errorf("per-port object warned of a shared cap: %+v", ws)
	}
	if c := Collisions([]Result{r}); len(c) != 0 {
		t.Errorf("one object's per-port rows reported as a collision: %v", c)
	}
	if on := CompileObject(prod, NewSnapshot(in), "node-b"); PerPortRows(on.QoS) != 1 {
		t.Errorf("node-b's controller: %d per-port rows, want 1 (virt-launcher-db-2)", PerPortRows(on.QoS))
	}
}

// TestPerNodeDefault: no annotation and "per-node" are the OKEP's
// per-rule-per-node meter: one row per rule, the shared cap warned.
func TestPerNodeDefault(t *testing.T) {
	for _, scope := range []string{"", BandwidthScopePerNode} {
		prod, in := story1Production(t, scope)
		r := CompileObject(prod, NewSnapshot(withTwin(in)), "")
		if len(r.QoS) != 2 || PerPortRows(r.QoS) != 0 || len(warningsOf(r, WarningSharedCap)) != 1 {
			t.Errorf("scope %q: rows %+v warnings %+v", scope, r.QoS, r.Warnings)
		}
	}
}

// TestBandwidthScopeInvalid: an unknown value is Accepted=False/
// InvalidSpec naming the object and the annotation, with no rows.
func TestBandwidthScopeInvalid(t *testing.T) {
	for _, v := range []string{"per-vm", "", "Per-Port"} {
		prod, in := story1Production(t, "x")
		prod.Annotations[BandwidthScopeAnnotation] = v
		r := CompileObject(prod, NewSnapshot(in), "")
		want := "prod-vms/tier-production: metadata.annotations[" + BandwidthScopeAnnotation + "]"
		if r.Err == nil || r.Accepted.Status != "False" || r.Accepted.Reason != ReasonInvalidSpec ||
			!strings.HasPrefix(r.Accepted.Message, want) || !strings.Contains(r.Accepted.Message, "per-port") {
			t.Errorf("value %q: Accepted %+v err %v, want False/InvalidSpec starting %q", v, r.Accepted, r.Err, want)
		}
		if len(r.QoS)+len(r.PortGroups) != 0 {
			t.Errorf("value %q: rows %+v", v, r)
		}
	}
}

// TestPodOfPort inverts LogicalPortName and refuses names it cannot
// have made.
func TestPodOfPort(t *testing.T) {
	ns, name, ok := PodOfPort(LogicalPortName("nad-ns", "tenant-blue", "vms", "virt-launcher-db-1-abcde"))
	if !ok || ns != "vms" || name != "virt-launcher-db-1-abcde" {
		t.Fatalf("PodOfPort = %q %q %v", ns, name, ok)
	}
	for _, bad := range []string{"", "a_b", "a_b_c_d", "a__c", "_b_c", "ls-port"} {
		if ns, name, ok := PodOfPort(bad); ok {
			t.Errorf("PodOfPort(%q) = %q %q, want not ok", bad, ns, name)
		}
	}
}

// TestBridgeRow: a port-group row's bridge names the port instead of the
// group and keeps everything else; per-port rows have no source group.
func TestBridgeRow(t *testing.T) {
	prod, in := story1Production(t, BandwidthScopePerPort)
	r := CompileObject(prod, NewSnapshot(in), "")
	var pgRow QoSRow
	for _, q := range r.QoS {
		if g := SourceGroup(q); g != "" {
			if g != r.PortGroups[0].Name {
				t.Fatalf("SourceGroup = %q, want %q", g, r.PortGroups[0].Name)
			}
			pgRow = q
		} else if q.ExternalIDs[PortKey] == "" {
			t.Fatalf("row without source group or port: %+v", q)
		}
	}
	b := BridgeRow(pgRow, "p1")
	if b.Match != `inport == "p1" && (ip4 || ip6)` || b.Priority != pgRow.Priority || b.Action != pgRow.Action || b.Switch != pgRow.Switch ||
		b.ExternalIDs[PrimaryIDKey] != pgRow.ExternalIDs[PrimaryIDKey]+":bridge:p1" || b.ExternalIDs[BridgeKey] != "true" ||
		b.ExternalIDs[RuleIndexKey] != pgRow.ExternalIDs[RuleIndexKey] || pgRow.ExternalIDs[PortKey] != "" {
		t.Fatalf("bridge %+v of %+v", b, pgRow)
	}
	if PerPortRows([]QoSRow{b}) != 0 || SourceGroup(b) != "" {
		t.Fatalf("a bridge counted as per-port or as a group row: %+v", b)
	}
}
