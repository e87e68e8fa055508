package verify

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/nqos/nqos/internal/intent"
	"github.com/nqos/nqos/scenarios"
	"github.com/nqos/nqos/scenarios/manifests"
)

// The IP families the tests ask for.
const (
	V4 = intent.V4
	V6 = intent.V6
)

// readDir decodes every manifest file of dir, sorted by name.
func readDir(t testing.TB, dir string) []*manifests.Object {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var objs []*manifests.Object
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		o, err := manifests.ReadBytes(data, f)
		if err != nil {
			t.Fatal(err)
		}
		objs = append(objs, o...)
	}
	return objs
}

// probeOf finds the probe of vm to dst proto/port.
func probeOf(t *testing.T, p *Plan, vm, dst, proto string, port int) Probe {
	t.Helper()
	for _, pr := range p.Probes {
		if pr.VM == vm && pr.Dst.String() == dst && pr.Protocol == proto && pr.Port == port {
			return pr
		}
	}
	t.Fatalf("no probe %s -> %s %s/%d", vm, dst, proto, port)
	return Probe{}
}

func TestBuildOKEP(t *testing.T) {
	p, err := Build(readDir(t, "../../examples/okep-localnet"), "examples/okep-localnet", Options{Families: []Family{V4, V6}, OVN: "23.03.1"})
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Probes) != 13 {
		t.Errorf("%d probes, want 13 (pay-1: 6 v4 + 3 v6, prod-1 and staging-1: 2 each)", len(p.Probes))
	}
	backup := probeOf(t, p, "vms/pay-1", "10.20.0.1", "tcp", 2049)
	if show(backup.Intent.DSCP) != 8 || show(backup.Intent.MeterKbps) != uint32(100000) || backup.Intent.MeterRule != "vms/backup-deprioritization#1" || backup.Overload == "" {
		t.Errorf("backup class: %+v", backup)
	}
	other := probeOf(t, p, "vms/pay-1", "10.20.0.1", "udp", 5201)
	if show(other.Intent.DSCP) != 46 || other.Intent.MeterKbps != nil || other.Overload != "" {
		t.Errorf("pay-1 UDP to the backup net: %+v", other)
	}
	if st := probeOf(t, p, "vms/staging-1", "fd00:10::1", "udp", 5201); show(st.Intent.Rule) != "vms/tier-staging#0" {
		t.Errorf("staging v6: %+v", st)
	}
	want := []Shadowed{{VM: "vms/pay-1", Rule: "vms/tier-production#0", By: "vms/backup-deprioritization#0", Consequence: "mark (DSCP 46) lost"}}
	if !slices.Equal(p.Shadowed, want) {
		t.Errorf("shadowed %+v, want %+v", p.Shadowed, want)
	}
	if n := len(p.Scenario.Topology.Hosts); n != 2 {
		t.Errorf("%d destination hosts, want 2 (10.0.0.1 + fd00:10::1, 10.20.0.1)", n)
	}
	if len(p.Scenario.Flows) != 14 {
		t.Errorf("%d flows, want 13 probes and 1 overload", len(p.Scenario.Flows))
	}
}

// TestBuildBackupBelowCatchall: the backup object below the production
// catch-all loses its mark on both versions and its cap on 25.03 only.
func TestBuildBackupBelowCatchall(t *testing.T) {
	objs := readDir(t, "../../examples/backup-below-catchall")
	for _, tc := range []struct {
		ovn   string
		meter bool
	}{{"23.03.1", true}, {"25.03.0", false}} {
		p, err := Build(objs, "examples/backup-below-catchall", Options{Families: []Family{V4}, OVN: tc.ovn})
		if err != nil {
			t.Fatal(err)
		}
		pr := probeOf(t, p, "vms/pay-1", "10.20.0.1", "tcp", 2049)
		if show(pr.Intent.DSCP) != 46 || show(pr.Intent.Rule) != "vms/tier-production#0" || (pr.Intent.MeterKbps != nil) != tc.meter || (pr.Overload != "") != tc.meter {
			t.Errorf("OVN %s: backup class %+v, want DSCP 46 from tier-production, meter %v", tc.ovn, pr, tc.meter)
		}
		if len(p.Shadowed) != 2 || p.Shadowed[1].Rule != "vms/backup-deprioritization#1" || p.Shadowed[1].By != "vms/tier-production#0" {
			t.Errorf("OVN %s: shadowed %+v", tc.ovn, p.Shadowed)
		}
	}
}

// TestBuildWithoutNetworkQoS: no object, every class unmarked, no wait.
func TestBuildWithoutNetworkQoS(t *testing.T) {
	var objs []*manifests.Object
	for _, o := range readDir(t, "../../examples/okep-localnet") {
		if o.Kind != "NetworkQoS" {
			objs = append(objs, o)
		}
	}
	p, err := Build(objs, "set", Options{Families: []Family{V4}, OVN: "23.03.1"})
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Probes) != 3 || len(p.Shadowed) != 0 {
		t.Fatalf("%d probes, shadowed %v; want 3 and none", len(p.Probes), p.Shadowed)
	}
	for _, pr := range p.Probes {
		if pr.Intent.DSCP != nil || pr.Intent.MeterKbps != nil || pr.Intent.Rule != nil {
			t.Errorf("%s: intent %+v, want unmarked", pr.VM, pr.Intent)
		}
	}
}

// TestBuildInvalid: the set's errors name the user's file and object.
func TestBuildInvalid(t *testing.T) {
	objs := readDir(t, "../../examples/okep-localnet")
	for _, o := range objs {
		if o.Kind == "NetworkQoS" && o.Name == "tier-staging" {
			o.Raw["spec"].(map[string]any)["priority"] = -3
		}
	}
	_, err := Build(objs, "set", Options{Families: []Family{V4}, OVN: "23.03.1"})
	var ie *InputError
	if !errors.As(err, &ie) || !strings.Contains(err.Error(), "40-networkqos.yaml:") || !strings.Contains(err.Error(), "NetworkQoS vms/tier-staging") || !strings.Contains(err.Error(), "priority") {
		t.Fatalf("err = %v, want an InputError naming the file, the object and priority", err)
	}
}

func show[T any](p *T) any {
	if p == nil {
		return nil
	}
	return *p
}

// TestBuildTwoNetworks: VMs on a CUDN and on a NAD, an ipBlock of each
// whole family but for the local ranges: every class gets a destination
// host on its VM's network.
func TestBuildTwoNetworks(t *testing.T) {
	objs := readDir(t, "../../internal/intent/testdata")
	p, err := Build(objs, "two-networks", Options{Families: []Family{V4, V6}, OVN: "23.03.1"})
	if err != nil {
		t.Fatal(err)
	}
	if pr := probeOf(t, p, "vms/web-1", "192.0.2.1", "udp", 5201); show(pr.Intent.DSCP) != 18 || pr.Overload == "" {
		t.Errorf("web-1 to the internet: %+v", pr)
	}
	if pr := probeOf(t, p, "vms/web-1", "10.0.0.1", "udp", 5201); pr.Intent.DSCP != nil {
		t.Errorf("web-1 to the except hole: %+v", pr)
	}
	if pr := probeOf(t, p, "vms/db-1", "10.60.0.1", "udp", 5201); show(pr.Intent.DSCP) != 10 {
		t.Errorf("db-1 on storage: %+v", pr)
	}
	nets := map[string]string{}
	for _, h := range p.Scenario.Topology.Hosts {
		nets[h.Name] = h.Network
	}
	for _, f := range p.Scenario.Flows {
		vm := p.Scenario.VM(f.From)
		if vm == nil || nets[f.To] != vm.Network {
			t.Errorf("flow %s from %s to %s: host on network %q", f.Name, f.From, f.To, nets[f.To])
		}
	}
}

// TestBuildSelectorDestinations: a class to a VM a selector destination
// selects is probed to that VM when it runs on another node, and left
// out, said in NotProbed, when it shares the sender's node.
func TestBuildSelectorDestinations(t *testing.T) {
	objs := readDir(t, "../../internal/intent/testdata/selectors")
	p, err := Build(objs, "selectors", Options{Families: []Family{V4}, OVN: "23.03.1"})
	if err != nil {
		t.Fatal(err)
	}
	pr := probeOf(t, p, "apps/web-1", "10.30.0.21", "udp", 5201)
	if show(pr.Intent.DSCP) != 26 || pr.DstVM != "apps/db-1" {
		t.Errorf("web-1 to db-1: %+v", pr)
	}
	if i := slices.IndexFunc(p.Scenario.Flows, func(f scenarios.Flow) bool { return f.Name == pr.Flow }); i < 0 || p.Scenario.Flows[i].To != "db-1" {
		t.Errorf("web-1 to db-1: flow %s is not one to VM db-1", pr.Flow)
	}
	if len(p.NotProbed) != 0 {
		t.Errorf("not probed %q, want none (the VMs run on different nodes)", p.NotProbed)
	}
	var same []*manifests.Object
	for _, o := range objs {
		if o.Ref() == "VirtualMachine apps/db-1" {
			spec := o.Raw["spec"].(map[string]any)["template"].(map[string]any)["spec"].(map[string]any)
			spec["nodeSelector"] = map[string]any{"kubernetes.io/hostname": "node1"}
		}
		same = append(same, o)
	}
	p, err = Build(same, "selectors", Options{Families: []Family{V4}, OVN: "23.03.1"})
	if err != nil {
		t.Fatal(err)
	}
	if len(p.NotProbed) != 2 || !strings.Contains(p.NotProbed[0], "on the same node") {
		t.Errorf("not probed %q, want web-1 -> db-1 and db-1 -> web-1 on the same node", p.NotProbed)
	}
	for _, pr := range p.Probes {
		if pr.DstVM != "" {
			t.Errorf("probe %s -> %s (VM %s) planned on one node", pr.VM, pr.Dst, pr.DstVM)
		}
	}
}
