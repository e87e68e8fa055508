package scenarios

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/nqos/nqos/internal/golden"
)

var update = flag.Bool("update", false, "rewrite golden files")

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
	base, err := os.ReadFile(filepath.Join("testdata", "base.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Parse(base, "base.yaml"); err != nil {
		t.Fatalf("base scenario must be valid: %v", err)
	}
	var got strings.Builder
	for _, c := range slices.Concat(errorCases, controllerErrorCases) {
		if n := strings.Count(string(base), c.old); n != 1 {
			t.Fatalf("%s: %q occurs %d times in base.yaml, want 1", c.name, c.old, n)
		}
		src := strings.Replace(string(base), c.old, c.new, 1)
		_, err := Parse([]byte(src), c.name+".yaml")
		if err == nil {
			t.Errorf("%s: parsed without error", c.name)
			continue
		}
		fmt.Fprintf(&got, "%s\n", err)
	}
	got.WriteString(adversarialErrors(t, string(base))) // errors_adversarial_test.go
	golden.Check(t, filepath.Join("testdata", "errors.golden"), []byte(got.String()), *update)
}
