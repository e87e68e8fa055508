package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nqos/nqos/internal/testenv"
)

// buildBinary builds nqos-sim (and the controller verify starts) into a
// temporary directory.
func buildBinary(t *testing.T) string {
	t.Helper()
	bin := t.TempDir()
	for _, pkg := range []string{".", "../nqos-controller"} {
		cmd := exec.Command("go", "build", "-o", bin, pkg)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("go build %s: %v\n%s", pkg, err, out)
		}
	}
	return filepath.Join(bin, "nqos-sim")
}

// upTestbed builds the binary and boots the set in dir as run runID with
// `up --detach --controller=false` and flags; the run goes down when the
// test ends. It returns the binary.
func upTestbed(t *testing.T, dir, runID string, flags ...string) string {
	t.Helper()
	bin := buildBinary(t)
	set, err := filepath.Abs(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if out, err := exec.Command(bin, "down", "--run-id", runID).CombinedOutput(); err != nil {
			t.Errorf("down: %v\n%s", err, out)
		}
	})
	args := append([]string{"up", "-f", set, "--detach", "--controller=false"}, flags...)
	up := exec.Command(bin, append(args, "--run-id", runID)...)
	up.Dir = t.TempDir()
	if out, err := up.CombinedOutput(); err != nil {
		t.Fatalf("up: %v\n%s", err, out)
	}
	return bin
}

// copyExample copies an example set into a directory outside the
// repository and returns that directory.
func copyExample(t *testing.T, name string) string {
	t.Helper()
	dir := t.TempDir()
	files, err := filepath.Glob(filepath.Join("../../examples", name, "*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("examples/%s: %v", name, err)
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, filepath.Base(f)), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// TestBinaryOutsideTheRepository runs the built binary from a directory
// outside the repository: explain always; verify (the testbed with its
// API server and the embedded CRDs) where it can boot one.
func TestBinaryOutsideTheRepository(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binaries")
	}
	bin, set := buildBinary(t), copyExample(t, "okep-localnet")
	run := func(args ...string) (string, error) {
		cmd := exec.Command(bin, args...)
		cmd.Dir = t.TempDir()
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	out, err := run("explain", "-f", set, "--ip-family", "v4")
	if err != nil || !strings.Contains(out, "vms/backup-deprioritization#1") {
		t.Fatalf("explain outside the repository: %v\n%s", err, out)
	}
	testenv.Root(t, "verify boots a testbed")
	testenv.Binaries(t, "ovsdb-server", "ovs-vswitchd", "ovn-controller", "ovn-northd", "ovn-nbctl", "ovn-trace")
	out, err = run("verify", "-f", set, "--ip-family", "v4", "--report-dir", t.TempDir())
	if err != nil || !strings.Contains(out, "8 probes, 8 agree") {
		t.Fatalf("verify outside the repository: %v\n%s", err, out)
	}
}
