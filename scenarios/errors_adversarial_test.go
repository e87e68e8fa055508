package scenarios

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// A second VM, a late VM and the step insertion point of the adversarial
// error cases (base.yaml has one VM).
const (
	advHosts   = "  hosts:\n"
	advVMB     = "    - {name: vm-b, namespace: vms, node: 0, network: blue, labels: {tier: silver}, addresses: {v4: 10.10.0.12/16}}\n    - {name: vm-l, namespace: vms, node: 0, network: blue, late: true, labels: {tier: gold}, addresses: {v4: 10.10.0.13/16}}\n  hosts:\n"
	advStep    = "  - delete: [gold]"
	advSilver  = "manifests:\n"
	advSilverM = "manifests:\n  silver:\n    apiVersion: k8s.ovn.org/v1alpha1\n    kind: NetworkQoS\n    metadata: {name: silver, namespace: vms}\n    spec:\n      networkSelectors: [{networkSelectionType: NetworkAttachmentDefinitions, networkAttachmentDefinitionSelector: {namespaceSelector: {}, networkSelector: {matchLabels: {net: blue}}}}]\n      podSelector: {matchLabels: {tier: silver}}\n      priority: 40\n      egress: [{dscp: 10, bandwidth: {rate: 10000, burst: 1000}}]\n"
	advSpoof   = "  - apply: [silver]\n  - spoof: {vm: vm-b, as: vm-a, peer: host-a, class: {manifest: silver}, asClass: {manifest: gold}}\n  - delete: [gold]"
	advChurn   = "  - churn: {duration: 10s, interval: 100ms, vms: [vm-a], label: tier, values: [gold, silver], objects: [gold, silver], reject: {spec: {egress: [{dscp: 1, classifier: {to: [{podSelector: {}}]}}]}}}\n  - delete: [gold]"
	advBase    = "  - ovnBaseline: {vm: vm-a, peer: host-a, dscp: 18}\n  - startVM: [vm-l]\n    probe: {peer: host-a, object: gold, dscp: 46, markedWithin: 300ms}\n  - delete: [gold]"
)

// adversarialErrorCases are the error classes of the spoof, churn,
// ovnBaseline and probed startVM steps; each applies its replacements to
// base.yaml in order (one occurrence each).
var adversarialErrorCases = []struct {
	name  string
	edits [][2]string
}{
	{"spoof-self", [][2]string{{advStep, "  - spoof: {vm: vm-a, as: vm-a, peer: host-a, class: {manifest: gold, rule: 1}, asClass: {manifest: gold}}\n" + advStep}}},
	{"spoof-unknown-vm", [][2]string{{advStep, "  - spoof: {vm: vm-a, as: vm-z, peer: host-a, class: {manifest: gold, rule: 1}, asClass: {manifest: gold}}\n" + advStep}}},
	{"spoof-missing-class", [][2]string{{advStep, "  - spoof: {vm: vm-a, as: vm-a, peer: host-a, asClass: {manifest: gold}}\n" + advStep}}},
	{"spoof-unknown-peer", [][2]string{{advHosts, advVMB}, {advSilver, advSilverM}, {advStep, strings.Replace(advSpoof, "peer: host-a", "peer: host-z", 1)}}},
	{"spoof-same-dscp", [][2]string{{advHosts, advVMB}, {advSilver, advSilverM}, {advStep, strings.Replace(advSpoof, "asClass: {manifest: gold}", "asClass: {manifest: silver}", 1)}}},
	{"spoof-class-without-bandwidth", [][2]string{{advHosts, advVMB}, {advSilver, advSilverM}, {advStep, strings.Replace(advSpoof, "class: {manifest: silver}, asClass: {manifest: gold}", "class: {manifest: gold}, asClass: {manifest: silver}", 1)}}},
	{"spoof-meter-not-overloaded", [][2]string{{advHosts, advVMB}, {advSilver, advSilverM}, {advStep, strings.Replace(advSpoof, "class: {manifest: silver}", "class: {manifest: gold, rule: 1}", 1)}}},
	{"spoof-class-not-applied", [][2]string{{advHosts, advVMB}, {advSilver, advSilverM}, {advStep, strings.Replace(advSpoof, "  - apply: [silver]\n", "", 1)}}},
	{"spoof-late-vm", [][2]string{{advHosts, advVMB}, {advSilver, advSilverM}, {advStep, strings.Replace(advSpoof, "vm: vm-b", "vm: vm-l", 1)}}},
	{"churn-duration-too-long", [][2]string{{advSilver, advSilverM}, {advStep, strings.Replace(advChurn, "duration: 10s", "duration: 60s", 1)}}},
	{"churn-interval-too-short", [][2]string{{advSilver, advSilverM}, {advStep, strings.Replace(advChurn, "interval: 100ms", "interval: 5ms", 1)}}},
	{"churn-missing-reject", [][2]string{{advSilver, advSilverM}, {advStep, strings.Replace(advChurn, ", reject: {spec: {egress: [{dscp: 1, classifier: {to: [{podSelector: {}}]}}]}}", "", 1)}}},
	{"churn-reject-not-a-mapping", [][2]string{{advSilver, advSilverM}, {advStep, strings.Replace(advChurn, "reject: {spec: {egress: [{dscp: 1, classifier: {to: [{podSelector: {}}]}}]}}", "reject: [1]", 1)}}},
	{"churn-reject-invalid", [][2]string{{advSilver, advSilverM}, {advStep, strings.Replace(advChurn, "reject: {spec: {egress: [{dscp: 1, classifier: {to: [{podSelector: {}}]}}]}}", "reject: {spec: {egress: [{dscp: 99}]}}", 1)}}},
	{"churn-one-value", [][2]string{{advSilver, advSilverM}, {advStep, strings.Replace(advChurn, "values: [gold, silver]", "values: [gold]", 1)}}},
	{"churn-bad-label-value", [][2]string{{advSilver, advSilverM}, {advStep, strings.Replace(advChurn, "values: [gold, silver]", "values: [gold, \"-x-\"]", 1)}}},
	{"churn-bad-label-key", [][2]string{{advSilver, advSilverM}, {advStep, strings.Replace(advChurn, "label: tier", "label: \"ti er\"", 1)}}},
	{"churn-one-object", [][2]string{{advSilver, advSilverM}, {advStep, strings.Replace(advChurn, "objects: [gold, silver]", "objects: [gold]", 1)}}},
	{"churn-not-networkqos", [][2]string{{advSilver, advSilverM}, {advStep, strings.Replace(advChurn, "objects: [gold, silver]", "objects: [gold, blue]", 1)}}},
	{"churn-object-twice", [][2]string{{advSilver, advSilverM}, {advStep, strings.Replace(advChurn, "objects: [gold, silver]", "objects: [gold, gold]", 1)}}},
	{"churn-vm-twice", [][2]string{{advSilver, advSilverM}, {advStep, strings.Replace(advChurn, "vms: [vm-a]", "vms: [vm-a, vm-a]", 1)}}},
	{"churn-late-vm-unknown", [][2]string{{advSilver, advSilverM}, {advStep, strings.Replace(advChurn, "vms: [vm-a]", "vms: [vm-a], lateVMs: [vm-z]", 1)}}},
	{"churn-late-vm-not-late", [][2]string{{advSilver, advSilverM}, {advStep, strings.Replace(advChurn, "vms: [vm-a]", "vms: [vm-a], lateVMs: [vm-a]", 1)}}},
	{"churn-late-vm-started", [][2]string{{advHosts, advVMB}, {advSilver, advSilverM}, {advStep, "  - startVM: [vm-l]\n" + strings.Replace(advChurn, "vms: [vm-a]", "vms: [vm-a], lateVMs: [vm-l]", 1)}}},
	{"churn-late-vm-twice", [][2]string{{advHosts, advVMB}, {advSilver, advSilverM}, {advStep, strings.Replace(advChurn, "vms: [vm-a]", "vms: [vm-a], lateVMs: [vm-l, vm-l]", 1)}}},
	{"churn-late-vms-empty", [][2]string{{advSilver, advSilverM}, {advStep, strings.Replace(advChurn, "vms: [vm-a]", "vms: [vm-a], lateVMs: []", 1)}}},
	{"churn-flow-running", [][2]string{{advSilver, advSilverM}, {"  - stop: [marked, other]", strings.Replace(advChurn, advStep, "  - stop: [marked, other]", 1)}}},
	{"baseline-dscp-out-of-range", [][2]string{{advStep, "  - ovnBaseline: {vm: vm-a, peer: host-a, dscp: 64}\n" + advStep}}},
	{"baseline-samples-out-of-range", [][2]string{{advStep, "  - ovnBaseline: {vm: vm-a, peer: host-a, dscp: 18, samples: 50}\n" + advStep}}},
	{"startvm-probe-without-baseline", [][2]string{{advHosts, advVMB}, {advStep, strings.Replace(advBase, "  - ovnBaseline: {vm: vm-a, peer: host-a, dscp: 18}\n", "", 1)}}},
	{"startvm-probe-without-tolerance", [][2]string{{advHosts, advVMB}, {advStep, strings.Replace(advBase, ", markedWithin: 300ms", "", 1)}}},
	{"startvm-probe-with-loss-bound", [][2]string{{advHosts, advVMB}, {advStep, strings.Replace(advBase, "markedWithin: 300ms", "markedWithin: 300ms, maxLost: 10", 1)}}},
	{"marked-within-on-other-step", [][2]string{{advStep, "  - restartLauncher: [vm-a]\n    probe: {peer: host-a, object: gold, dscp: 46, markedWithin: 1s}\n" + advStep}}},
}

// adversarialErrors parses each adversarial error case and returns the
// error lines for errors.golden.
func adversarialErrors(t *testing.T, base string) string {
	t.Helper()
	var out strings.Builder
	for _, c := range adversarialErrorCases {
		src := base
		for _, e := range c.edits {
			if n := strings.Count(src, e[0]); n != 1 {
				t.Fatalf("%s: %q occurs %d times, want 1", c.name, e[0], n)
			}
			src = strings.Replace(src, e[0], e[1], 1)
		}
		_, err := Parse([]byte(src), c.name+".yaml")
		if err == nil {
			t.Errorf("%s: parsed without error", c.name)
			continue
		}
		fmt.Fprintf(&out, "%s\n", err)
	}
	return out.String()
}

// TestAdversarialStepsParse: the valid forms of the new steps parse and
// resolve their figures from the manifests.
func TestAdversarialStepsParse(t *testing.T) {
	base := readBase(t)
	// the churn starts and stops vm-l and leaves it stopped: the startVM after it is valid
	churn := strings.Replace(advChurn, "vms: [vm-a]", "vms: [vm-a], lateVMs: [vm-l]", 1)
	steps := strings.TrimSuffix(advSpoof, "\n"+advStep) + "\n" + strings.TrimSuffix(churn, "\n"+advStep) + "\n" + advBase
	src := strings.Replace(strings.Replace(strings.Replace(base, advHosts, advVMB, 1), advSilver, advSilverM, 1), advStep, steps, 1)
	sc, err := Parse([]byte(src), "adversarial.yaml")
	if err != nil {
		t.Fatal(err)
	}
	kinds := map[string]*Step{}
	for i := range sc.Steps {
		kinds[sc.Steps[i].Kind()] = &sc.Steps[i]
	}
	sp := kinds["spoof"].Spoof
	if sp == nil || sp.DSCP != 10 || sp.AsDSCP != 46 || sp.RateKbps != 10000 || sp.BurstKbit != 1000 {
		t.Errorf("spoof resolved %+v, want DSCP 10 vs 46, 10000 kbit/s burst 1000", sp)
	}
	ch := kinds["churn"].Churn
	if ch == nil || len(ch.Base) != 2 || !ch.Applied[0] || !ch.Applied[1] || ch.Converge != DefaultConverge || ch.RejectPatch == nil || !slices.Equal(ch.LateVMs, []string{"vm-l"}) {
		t.Errorf("churn resolved %+v, want both objects applied, default converge, a reject patch, late VM vm-l", ch)
	}
	if b := kinds["ovnBaseline"].OVNBaseline; b == nil || b.Samples != DefaultBaselineN {
		t.Errorf("ovnBaseline %+v, want default samples %d", b, DefaultBaselineN)
	}
	if p := kinds["startVM"].Probe; p == nil || p.MarkedWithin.String() != "300ms" || p.Manifest == nil {
		t.Errorf("startVM probe %+v, want markedWithin 300ms and its object resolved", p)
	}
}

func readBase(t *testing.T) string {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("testdata", "base.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	return string(raw)
}
