// Package testenv is the one way tests gate on what the machine has: root,
// installed binaries, the kube binaries, files. A test that needs such a
// thing calls one of these helpers first. Where the thing is missing the
// test is skipped with the reason, except when the environment variable CI
// is set to true: there a missing prerequisite is a failure, so CI never
// passes by skipping. `go test -short` (make unit) skips every test that
// needs anything beyond Go itself.
package testenv

import (
	"fmt"
	"os"
	"os/exec"
	"testing"
)

// InCI reports whether the tests run under CI (CI=true), where a missing
// prerequisite fails instead of skipping.
func InCI() bool { return os.Getenv("CI") == "true" }

// Hermetic marks a test that needs more than Go (root, daemons, files
// outside the repository): under -short it is skipped with reason.
func Hermetic(t testing.TB, reason string) {
	t.Helper()
	if testing.Short() {
		t.Skip("-short: " + reason)
	}
}

// missing skips the test, or fails it under CI, with the reason.
func missing(t testing.TB, reason string) {
	t.Helper()
	if InCI() {
		t.Fatalf("CI=true and a prerequisite is missing: %s", reason)
	}
	t.Skip(reason)
}

// Root requires uid 0 and the right to create network namespaces. It
// implies Hermetic.
func Root(t testing.TB, why string) {
	t.Helper()
	Hermetic(t, why)
	if os.Geteuid() != 0 {
		missing(t, "needs root: "+why)
	}
}

// Binaries requires every named program on PATH. It implies Hermetic.
func Binaries(t testing.TB, names ...string) {
	t.Helper()
	requireEach(t, fmt.Sprintf("runs %v", names), names, exec.LookPath, "%s not on PATH (make deps installs it): %v")
}

// Files requires every named path to exist. It implies Hermetic.
func Files(t testing.TB, paths ...string) {
	t.Helper()
	requireEach(t, fmt.Sprintf("reads %v", paths), paths, os.Stat, "%s missing (make deps installs it): %v")
}

// requireEach implies Hermetic for why, then marks missing each name
// whose check fails, saying so by format (the name, then the error).
func requireEach[T any](t testing.TB, why string, names []string, check func(string) (T, error), format string) {
	t.Helper()
	Hermetic(t, why)
	for _, n := range names {
		if _, err := check(n); err != nil {
			missing(t, fmt.Sprintf(format, n, err))
		}
	}
}

// Check requires err to be nil; what names the prerequisite. It implies
// Hermetic. Use it for prerequisites found by a function (the kube binaries,
// an OVN install) rather than a plain path.
func Check(t testing.TB, what string, err error) {
	t.Helper()
	Hermetic(t, what)
	if err != nil {
		missing(t, fmt.Sprintf("%s: %v", what, err))
	}
}
