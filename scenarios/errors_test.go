package scenarios

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/nqos/nqos/internal/golden"
)

// errorCases derive one invalid scenario per error class from
// testdata/base.yaml by replacing one exact text with another.
var errorCases = []struct{ name, old, new string }{
	{"unknown-top-level-key", "ipFamilies: [v4]", "ipFamily: [v4]"},
	{"unknown-nested-key", "      - dscp: 8\n        policedBy", "      - dscpp: 8\n        policedBy"},
	{"wrong-type", "nodes: 2", "nodes: two"},
	{"missing-required", "    protocol: udp\n    rate: 300M", "    rate: 300M"},
	{"duplicate-key", "    rate: 300M\n", "    rate: 300M\n    rate: 200M\n"},
	{"yaml-alias", "      labels: {tier: gold}\n      addresses: {v4: 10.10.0.11/16}", "      labels: &l {tier: gold}\n      addresses: *l"},
	{"two-documents", "steps:\n", "---\nsteps:\n"},
	{"dscp-out-of-range", "      - dscp: 8\n        policedBy", "      - dscp: 64\n        policedBy"},
	{"dscp-and-unmarked", "      - unmarked: true", "      - unmarked: true\n        dscp: 10"},
	{"empty-expectation", "      - unmarked: true", "      - why: nothing"},
	{"rate-bound-without-bandwidth", "policedBy: {manifest: gold, rule: 1}", "policedBy: {manifest: gold, rule: 0}"},
	{"rate-bound-rule-out-of-range", "policedBy: {manifest: gold, rule: 1}", "policedBy: {manifest: gold, rule: 5}"},
	{"rate-bound-unobservable", "    rate: 300M\n    duration: 2s", "    rate: 50M\n    duration: 2s"},
	{"below-not-judged", "    rate: 300M\n    duration: 2s\n    expect:\n      - dscp: 8\n        policedBy: {manifest: gold, rule: 1}",
		"    rate: 150M\n    duration: 2s\n    expect:\n      - dscp: 8\n        policedBy: {manifest: gold, rule: 1, below: 0.3}"},
	{"throughput-min-above-max", "throughput: {max: 110M}", "throughput: {min: 200M, max: 110M}"},
	{"bad-bitrate", "rate: 300M", "rate: 300 Mbit"},
	{"bad-duration", "duration: 2s", "duration: 2 seconds"},
	{"bad-ovn-constraint", `when: {ovn: ">=24.09"}`, `when: {ovn: "newer"}`},
	{"bad-ip-family", "ipFamilies: [v4]", "ipFamilies: [ipv4]"},
	{"flow-family-without-address", "ipFamilies: [v4]", "ipFamilies: [v4, v6]"},
	{"unknown-vm-in-flow", "    from: vm-a\n    to: host-a\n    protocol: udp\n    rate: 300M", "    from: vm-x\n    to: host-a\n    protocol: udp\n    rate: 300M"},
	{"unknown-host-in-flow", "    from: vm-a\n    to: host-a\n    protocol: udp\n    rate: 10M", "    from: vm-a\n    to: host-b\n    protocol: udp\n    rate: 10M"},
	{"vm-node-beyond-nodes", "      node: 1", "      node: 2"},
	{"never-own-rows-without-audit", "steps:\n", "invariants: {neverOwnRows: [gold]}\nsteps:\n"},
	{"never-own-rows-not-networkqos", "steps:\n", "invariants: {nbAudit: true, neverOwnRows: [blue]}\nsteps:\n"},
	{"vm-unknown-network", "      network: blue\n      labels", "      network: red\n      labels"},
	{"bad-address", "addresses: {v4: 10.10.0.11/16}", "addresses: {v4: 10.10.0.11}"},
	{"duplicate-name", "name: host-a,", "name: vm-a,"},
	{"nad-vlan-mismatch", "vlan: 100, ipam: none", "vlan: 200, ipam: none"},
	{"nad-ipam-mismatch", "vlan: 100, ipam: none", "vlan: 100, ipam: dhcp"},
	{"unknown-object-in-step", "  - apply: [blue, gold]", "  - apply: [blue, gold, silver]"},
	{"edit-not-applied", "  - apply: [blue, gold]", "  - apply: [blue]"},
	{"delete-not-applied", "  - delete: [gold]", "  - delete: [gold]\n  - delete: [gold]"},
	{"two-actions-in-step", "  - delete: [gold]", "  - delete: [gold]\n    apply: [gold]"},
	{"no-action-in-step", "  - delete: [gold]", "  - name: nothing"},
	{"flow-never-stopped", "  - stop: [marked, other]\n", ""},
	{"partial-stop", "  - stop: [marked, other]", "  - stop: [marked]\n  - stop: [other]"},
	{"flow-started-twice", "  - stop: [marked, other]", "  - stop: [marked, other]\n  - start: [other]"},
	{"startvm-not-late", "  - delete: [gold]", "  - startVM: [vm-a]\n  - delete: [gold]"},
	{"startvm-unknown-vm", "  - delete: [gold]", "  - startVM: [vm-z]\n  - delete: [gold]"},
	{"startvm-empty", "  - delete: [gold]", "  - startVM: []\n  - delete: [gold]"},
	{"late-vm-used-before-start", "      labels: {tier: gold}\n      addresses: {v4: 10.10.0.11/16}", "      labels: {tier: gold}\n      late: true\n      addresses: {v4: 10.10.0.11/16}"},
	{"late-not-bool", "      labels: {tier: gold}\n      addresses: {v4: 10.10.0.11/16}", "      labels: {tier: gold}\n      late: yes\n      addresses: {v4: 10.10.0.11/16}"},
	{"migrate-without-probe", "  - delete: [gold]", "  - migrate: {vm: vm-a, to: 0, mode: per-pod-lsp}\n  - delete: [gold]"},
	{"migrate-same-node", "  - delete: [gold]", "  - migrate: {vm: vm-a, to: 1, mode: per-pod-lsp}\n    probe: {peer: host-a, object: gold, dscp: 46}\n  - delete: [gold]"},
	{"migrate-node-out-of-range", "  - delete: [gold]", "  - migrate: {vm: vm-a, to: 2, mode: per-pod-lsp}\n    probe: {peer: host-a, object: gold, dscp: 46}\n  - delete: [gold]"},
	{"migrate-bad-mode", "  - delete: [gold]", "  - migrate: {vm: vm-a, to: 0, mode: teleport}\n    probe: {peer: host-a, object: gold, dscp: 46}\n  - delete: [gold]"},
	{"migrate-late-lsp-multichassis", "  - delete: [gold]", "  - migrate: {vm: vm-a, to: 0, mode: multi-chassis, lateTargetLSP: true}\n    probe: {peer: host-a, object: gold, dscp: 46}\n  - delete: [gold]"},
	{"probe-unknown-peer", "  - delete: [gold]", "  - restartLauncher: [vm-a]\n    probe: {peer: host-z, object: gold, dscp: 46}\n  - delete: [gold]"},
	{"probe-dscp-out-of-range", "  - delete: [gold]", "  - restartLauncher: [vm-a]\n    probe: {peer: host-a, object: gold, dscp: 64}\n  - delete: [gold]"},
	{"probe-on-other-step", "  - delete: [gold]", "  - expect: {noOwnedRows: true}\n    probe: {peer: host-a, object: gold, dscp: 46}\n  - delete: [gold]"},
	{"guestip-bad-address", "  - delete: [gold]", "  - guestIP: {vm: vm-a, v4: 10.10.0.99}\n    probe: {peer: host-a, object: gold, dscp: 46}\n  - delete: [gold]"},
	{"restartdaemon-without-gap", "  - delete: [gold]", "  - restartDaemon: {node: 1, daemon: ovn-controller, mode: kill, vm: vm-a}\n    probe: {peer: host-a, object: gold, dscp: 46}\n  - delete: [gold]"},
	{"restartdaemon-bad-daemon", "  - delete: [gold]", "  - restartDaemon: {node: 1, daemon: northd, mode: kill, vm: vm-a}\n    probe: {peer: host-a, object: gold, dscp: 46, maxGap: 1s}\n  - delete: [gold]"},
	{"restartdaemon-bad-mode", "  - delete: [gold]", "  - restartDaemon: {node: 1, daemon: ovs-vswitchd, mode: hup, vm: vm-a}\n    probe: {peer: host-a, object: gold, dscp: 46, maxGap: 1s}\n  - delete: [gold]"},
	{"restartdaemon-other-node", "  - delete: [gold]", "  - restartDaemon: {node: 0, daemon: ovn-controller, mode: kill, vm: vm-a}\n    probe: {peer: host-a, object: gold, dscp: 46, maxGap: 1s}\n  - delete: [gold]"},
	{"gap-on-restart-launcher", "  - delete: [gold]", "  - restartLauncher: [vm-a]\n    probe: {peer: host-a, object: gold, dscp: 46, maxGap: 1s}\n  - delete: [gold]"},
	{"unknown-vm-in-label", "label: {vm: vm-a,", "label: {vm: vm-z,"},
	{"expect-with-timeout", "expect: {noOwnedRows: true}", "expect: {noOwnedRows: true, timeout: 5s}"},
	{"check-unknown-object", "        - manifest: gold\n          condition", "        - manifest: platinum\n          condition"},
	{"check-bad-status", `condition: {status: "True",`, `condition: {status: true,`},
	{"rows-rule-out-of-range", "qos: [{rule: 0,", "qos: [{rule: 7,"},
	{"rows-match-without-pg", `match: "inport == @$pg && (ip4 || ip6)"`, `match: "ip4.src == {$x}"`},
	{"rows-unknown-member", "portGroupMembers: [vm-a]", "portGroupMembers: [vm-q]"},
	{"manifest-unknown-kind", "    kind: NetworkQoS", "    kind: NetworkPolicy"},
	{"manifest-unknown-field", "      priority: 50", "      priority: 50\n      prioritty: 5"},
	{"manifest-invalid-spec", "      priority: 50", "      priority: 500"},
	{"edit-makes-manifest-invalid", "patch: {spec: {priority: 40}}", "patch: {spec: {priority: -1}}"},
	{"edit-changes-identity", "patch: {spec: {priority: 40}}", "patch: {metadata: {name: other}}"},
}

func TestErrorClassesGolden(t *testing.T) {
	base := readBase(t)
	if _, err := Parse([]byte(base), "base.yaml"); err != nil {
		t.Fatalf("base scenario must be valid: %v", err)
	}
	var got strings.Builder
	for _, c := range slices.Concat(errorCases, controllerErrorCases) {
		if n := strings.Count(base, c.old); n != 1 {
			t.Fatalf("%s: %q occurs %d times in base.yaml, want 1", c.name, c.old, n)
		}
		src := strings.Replace(base, c.old, c.new, 1)
		_, err := Parse([]byte(src), c.name+".yaml")
		if err == nil {
			t.Errorf("%s: parsed without error", c.name)
			continue
		}
		fmt.Fprintf(&got, "%s\n", err)
	}
	got.WriteString(adversarialErrors(t, base))
	golden.Check(t, filepath.Join("testdata", "errors.golden"), []byte(got.String()))
}

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
