package main

import (
	"bytes"
	"io"
	"slices"
	"strings"
	"testing"

	"github.com/nqos/nqos/scenarios"
)

func TestParseRunArgs(t *testing.T) {
	for _, tc := range []struct {
		args   []string
		names  []string
		dir    string
		family string
		err    string
	}{
		{args: nil, family: "v4"},
		{args: []string{"story1-tiers", "--report-dir", "/tmp/x", "story2-backup", "--ip-family", "dual"},
			names: []string{"story1-tiers", "story2-backup"}, dir: "/tmp/x", family: "dual"},
		{args: []string{"--ip-family=v6", "deletion"}, names: []string{"deletion"}, family: "v6"},
		{args: []string{"--ip-family", "v5"}, err: `--ip-family: invalid IP family mode "v5"`},
		{args: []string{"--nope"}, err: "flag provided but not defined: -nope"},
		{args: []string{"--ipam", "ovnk", "deletion"}, names: []string{"deletion"}, family: "v4"},
		{args: []string{"--ipam", "static"}, err: `--ipam: invalid IPAM mode "static"`},
	} {
		o, err := parseRunArgs(tc.args, io.Discard)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%v: error %v, want %q", tc.args, err, tc.err)
			}
			continue
		}
		if err != nil || !slices.Equal(o.names, tc.names) || o.reportDir != tc.dir || o.family != tc.family {
			t.Errorf("%v: got %+v err %v", tc.args, o, err)
		}
	}
}

func TestPrintPlanListsEveryStep(t *testing.T) {
	scs, err := scenarios.Resolve([]string{"story2-backup"})
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	printPlan(&b, scs, backendEmbedded, nil)
	out := b.String()
	if n := strings.Count(out, "\n"); n != 1+len(scs[0].Topology.VMs)+len(scs[0].Steps)+len(scs[0].Flows) {
		t.Errorf("%d lines:\n%s", n, out)
	}
	for _, want := range []string{"story2-backup (02-story2-backup.yaml", "edit   lower the backup object below tier-production — NetworkQoS vms/backup-deprioritization", "flow backup-lowprio"} {
		if !strings.Contains(out, want) {
			t.Errorf("plan lacks %q:\n%s", want, out)
		}
	}
}

// TestPlanDescribesEveryKind: every step of every built-in scenario, of
// every kind, has a description in the plan.
func TestPlanDescribesEveryKind(t *testing.T) {
	scs, err := scenarios.Resolve(nil)
	if err != nil {
		t.Fatal(err)
	}
	described := map[string]bool{}
	for _, sc := range scs {
		for i := range sc.Steps {
			st := &sc.Steps[i]
			d := st.Describe()
			if st.Name != "" {
				_, d, _ = strings.Cut(d, " — ")
			}
			if strings.TrimSpace(d) == "" {
				t.Errorf("%s steps[%d] (%s): no description", sc.Name, i, st.Kind())
			}
			described[st.Kind()] = true
		}
	}
	for _, k := range scenarios.Kinds() {
		if !described[k] {
			t.Errorf("kind %s is used by no built-in scenario", k)
		}
	}
}

// TestValidateKindBackend: --validate with --backend kind (no cluster)
// says which scenarios the KinD backend cannot run, and why, before
// anything boots.
func TestValidateKindBackend(t *testing.T) {
	scs, err := scenarios.Resolve([]string{"story1-tiers", "vm-lifecycle", "daemon-restarts", "controller-restart"})
	if err != nil {
		t.Fatal(err)
	}
	o, err := parseRunArgs([]string{"--backend", "kind", "--validate"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	printPlan(&b, scs, o.backend, backendLacks(o))
	out := b.String()
	for _, want := range []string{
		") migrate: live migration: the launcher pods are the kubelets'",
		"not supported by the kind backend: steps[2] (line 57) restartDaemon: restarting an OVS or OVN daemon",
		"not supported by the kind backend: the scenario runs the controller as a process of its own",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("plan lacks %q:\n%s", want, out)
		}
	}
	if n := strings.Count(out, "not supported"); n != 3 {
		t.Errorf("%d scenarios not supported, want 3 (story1-tiers runs on KinD):\n%s", n, out)
	}
}

// TestPrintPlanPlacement prints each VM's node and why, and the VMs that
// do not start with the scheduler's reason.
func TestPrintPlanPlacement(t *testing.T) {
	scs, err := scenarios.Resolve([]string{"placement-node-labels"})
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	printPlacement(&b, scs[0])
	want := `  vm vms/web-1 on node1{node-role.kubernetes.io/worker=gen1}: no nodeSelector (any of 3 nodes); localnet physnet mapped on node1, node3 by NNCP network-config-gen1; spread: fewest VMs on node1
  vm vms/web-2 on node3{node-role.kubernetes.io/worker=gen1}: no nodeSelector (any of 3 nodes); localnet physnet mapped on node1, node3 by NNCP network-config-gen1; spread: fewest VMs on node3
  vm vms/web-gen2 does not start: 0/3 nodes are available: 1 node(s) didn't map localnet "physnet" (no NodeNetworkConfigurationPolicy bridge-mapping), 2 node(s) didn't match Pod's node affinity/selector.
  vm vms/web-group-1 does not start: 0/3 nodes are available: 3 node(s) didn't match Pod's node affinity/selector.
`
	if b.String() != want {
		t.Fatalf("placement:\n%s\nwant:\n%s", b.String(), want)
	}
}
