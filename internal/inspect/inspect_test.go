package inspect

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/nqos/nqos/scenarios/manifests"
)

func run(t *testing.T, cmd func(context.Context, []string, Env) error, args ...string) (string, error) {
	t.Helper()
	var out, errOut bytes.Buffer
	err := cmd(context.Background(), args, Env{Stdout: &out, Stderr: &errOut, OVN: "23.03"})
	return out.String(), err
}

func exitCode(err error) int {
	var ee *ExitError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &ee):
		return ee.Code
	}
	return 1
}

// TestExplainJSONContract: verify's contract without trace and wire.
func TestExplainJSONContract(t *testing.T) {
	out, err := run(t, Explain, "-f", "../../examples/okep-localnet", "-o", "json")
	if err != nil {
		t.Fatal(err)
	}
	var rep struct {
		OVNVersion string           `json:"ovnVersion"`
		Shadowed   []map[string]any `json:"shadowed"`
		Probes     []map[string]any `json:"probes"`
		Summary    map[string]int   `json:"summary"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatal(err)
	}
	if rep.OVNVersion != "23.03" || len(rep.Probes) != 13 || rep.Summary["probes"] != 13 || len(rep.Shadowed) != 1 {
		t.Fatalf("report %+v", rep)
	}
	for _, p := range rep.Probes {
		for _, k := range []string{"vm", "family", "dst", "protocol", "port", "intent"} {
			if _, ok := p[k]; !ok {
				t.Errorf("probe %v: no %q", p, k)
			}
		}
		if _, ok := p["trace"]; ok {
			t.Errorf("probe %v has a trace leg", p)
		}
	}
}

func TestExplainInvalid(t *testing.T) {
	for _, args := range [][]string{{}, {"-f", "does-not-exist"}, {"-f", "../../examples/okep-localnet", "--ovn", "x"}, {"-f", "../../examples/okep-localnet", "-o", "xml"}} {
		if _, err := run(t, Explain, args...); exitCode(err) != ExitInvalid {
			t.Errorf("explain %q: %v, want exit 2", args, err)
		}
	}
}

// TestDiffExitCodes: the same set is exit 0, the two examples exit 1
// naming the newly shadowed backup rule, a missing side exit 2.
func TestDiffExitCodes(t *testing.T) {
	okep, backup := "../../examples/okep-localnet", "../../examples/backup-below-catchall"
	out, err := run(t, Diff, "--from", okep, "--to", okep)
	if err != nil || !strings.Contains(out, "nothing changes") {
		t.Fatalf("same set: %v\n%s", err, out)
	}
	out, err = run(t, Diff, "--from", okep, "--to", backup, "--ip-family", "v4")
	if exitCode(err) != ExitChanged || !strings.Contains(out, "newly shadowed: vms/pay-1: vms/backup-deprioritization#1 shadowed by vms/tier-production#0") ||
		!strings.Contains(out, "8, 100000 kbps, vms/backup-deprioritization#1") {
		t.Fatalf("examples: %v\n%s", err, out)
	}
	if _, err := run(t, Diff, "--from", okep); exitCode(err) != ExitInvalid {
		t.Fatalf("no --to: %v", err)
	}
}

// TestLauncherVM: a launcher pod becomes a VirtualMachine with its labels
// (not KubeVirt's), its networks, the testbed node standing for its node
// and its pod-networks addresses, else documentation addresses and a note.
func TestLauncherVM(t *testing.T) {
	pod := func(name, node, podNetworks string) *corev1.Pod {
		ann := map[string]string{"k8s.v1.cni.cncf.io/networks": "vms/blue"}
		if podNetworks != "" {
			ann["k8s.ovn.org/pod-networks"] = podNetworks
		}
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "virt-launcher-" + name + "-abcde", Namespace: "vms", Annotations: ann,
			Labels: map[string]string{"kubevirt.io": "virt-launcher", "vm.kubevirt.io/name": name, "tier": "gold"}}, Spec: corev1.PodSpec{NodeName: node}}
	}
	var m Manifests
	nad := map[string]any{"apiVersion": "k8s.cni.cncf.io/v1", "kind": "NetworkAttachmentDefinition", "metadata": map[string]any{"name": "blue", "namespace": "vms"},
		"spec": map[string]any{"config": `{"cniVersion":"1.0.0","name":"blue","type":"ovn-k8s-cni-overlay","topology":"localnet","physicalNetworkName":"physnet","netAttachDefName":"vms/blue"}`}}
	if err := m.add("test", nad); err != nil {
		t.Fatal(err)
	}
	err := m.launcherVMs("test", []*corev1.Pod{pod("b", "worker-b", `{"vms/blue":{"ip_addresses":["10.1.0.5/16"]}}`), pod("a", "worker-a", "")})
	if err != nil {
		t.Fatal(err)
	}
	set, err := manifests.Decode(m.Objects)
	if err != nil {
		t.Fatal(err)
	}
	placed, err := set.Place(NodeNames(m.Nodes))
	if err != nil || len(placed) != 2 || m.Nodes != 2 {
		t.Fatalf("%v: %d placed on %d nodes", err, len(placed), m.Nodes)
	}
	got := map[string]string{}
	for _, r := range placed {
		if r.Why != "" || r.VM.Labels["tier"] != "gold" || r.VM.Labels["kubevirt.io"] != "" || r.VM.NICs[0].NAD != "vms/blue" {
			t.Errorf("%s: %+v", r.VM.Name, r)
		}
		got[r.VM.Name] = r.Node + " " + r.VM.NICs[0].IPv4
	}
	if got["a"] != "node1 192.0.2.10/24" || got["b"] != "node2 10.1.0.5/16" {
		t.Errorf("placed %v", got)
	}
	if len(m.Notes) != 1 || !strings.Contains(m.Notes[0], "vms/a: guest addresses unknown") {
		t.Errorf("notes %v", m.Notes)
	}
}
