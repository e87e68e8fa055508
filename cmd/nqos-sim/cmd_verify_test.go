package main

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nqos/nqos/harness/verify"
	"github.com/nqos/nqos/internal/inspect"
	"github.com/nqos/nqos/internal/testenv"
)

// TestVerifyInvalidInput: every refusal before a testbed boots is exit 2
// and names what is wrong (file, object and field for a manifest).
func TestVerifyInvalidInput(t *testing.T) {
	dir := t.TempDir()
	badVM := filepath.Join(dir, "vm.yaml")
	if err := os.WriteFile(badVM, []byte("apiVersion: kubevirt.io/v1\nkind: VirtualMachine\nmetadata: {name: v, namespace: vms}\nspec:\n  runStrategy: Sometimes\n  template: {spec: {}}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		args []string
		want string
	}{
		{"no manifests", []string{}, "-f DIR|FILE, or --kubeconfig/--context for a live cluster, is required"},
		{"two sources", []string{"-f", dir, "--kubeconfig", "/nonexistent"}, "give one source"},
		{"a stray argument", []string{"-f", dir, "extra"}, `unexpected argument "extra"`},
		{"bad output", []string{"-f", dir, "-o", "yaml"}, `-o "yaml": want text or json`},
		{"bad family", []string{"-f", dir, "--ip-family", "v5"}, "--ip-family"},
		{"bad OVN version", []string{"-f", dir, "--ovn", "23.03,22.12"}, "--ovn"},
		{"no nodes", []string{"-f", dir, "--nodes", "0"}, "--nodes 0"},
		{"a missing path", []string{"-f", filepath.Join(dir, "nope")}, "nope"},
		{"an empty directory", []string{"-f", t.TempDir()}, "no *.yaml"},
		{"an invalid VirtualMachine", []string{"-f", badVM}, badVM + `:1: VirtualMachine vms/v: spec.runStrategy: "Sometimes"`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := runVerifyQuiet(t, tc.args)
			var ec *inspect.ExitError
			if !errors.As(err, &ec) || ec.ExitCode() != exitInvalid || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want exit 2 naming %q", err, tc.want)
			}
		})
	}
	if code := realMain(context.Background(), []string{"verify", "-o", "yaml", "-f", dir}); code != exitInvalid {
		t.Errorf("realMain exit %d, want %d", code, exitInvalid)
	}
}

// runVerifyQuiet runs verify with its flag usage output discarded.
func runVerifyQuiet(t *testing.T, args []string) error {
	t.Helper()
	stderr := os.Stderr
	null, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { os.Stderr = stderr; null.Close() }()
	os.Stderr = null
	return runVerify(context.Background(), args)
}

// TestVerifyInvalidNetworkQoS: a NetworkQoS the scenario parser refuses
// is reported against the user's file and object, exit 2, before any
// testbed starts.
func TestVerifyInvalidNetworkQoS(t *testing.T) {
	testenv.Binaries(t, "ovn-northd")
	dir := t.TempDir()
	for _, f := range []string{"00-namespace.yaml", "10-nncp.yaml", "20-cudn.yaml", "30-vms.yaml"} {
		data, err := os.ReadFile(filepath.Join("../../examples/okep-localnet", f))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, f), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	bad := "apiVersion: k8s.ovn.org/v1alpha1\nkind: NetworkQoS\nmetadata: {name: wrong, namespace: vms}\nspec:\n  priority: 10\n  egress:\n  - dscp: 99\n"
	qosFile := filepath.Join(dir, "40-networkqos.yaml")
	if err := os.WriteFile(qosFile, []byte(bad), 0o644); err != nil {
		t.Fatal(err)
	}
	err := runVerifyQuiet(t, []string{"-f", dir, "--ovn", "23.03"})
	var ec *inspect.ExitError
	if !errors.As(err, &ec) || ec.ExitCode() != exitInvalid || !strings.Contains(err.Error(), qosFile+":1: NetworkQoS vms/wrong") || !strings.Contains(err.Error(), "dscp") {
		t.Fatalf("err = %v, want exit 2 naming %s, NetworkQoS vms/wrong and the dscp field", err, qosFile)
	}
}

// TestVerifyExitCodes: every probe agreeing is exit 0, any disagreement
// exit 1, and so is a report without probes.
func TestVerifyExitCodes(t *testing.T) {
	ok := &verify.Report{OVNVersion: "23.03.1", Summary: verify.Summary{Probes: 3, Agree: 3}}
	bad := &verify.Report{OVNVersion: "25.03.0", Summary: verify.Summary{Probes: 3, Agree: 2}}
	empty := &verify.Report{OVNVersion: "23.03.1"}
	if err := verdictOf(ok); err != nil {
		t.Errorf("all agree: %v", err)
	}
	for _, reps := range [][]*verify.Report{{bad}, {ok, bad}, {empty}} {
		err := verdictOf(reps...)
		var ec *inspect.ExitError
		if !errors.As(err, &ec) || ec.ExitCode() != exitDisagree {
			t.Errorf("%d reports: err = %v, want exit 1", len(reps), err)
		}
	}
	if err := verdictOf(ok, bad); !strings.Contains(err.Error(), "OVN 25.03.0: 1 of 3 probes disagree") {
		t.Errorf("err = %v", err)
	}
}
