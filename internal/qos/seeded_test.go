package qos

import (
	"github.com/nqos/nqos/internal/testenv"

	"context"
	"debug/elf"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nqos/nqos/internal/seeded"
)

// seededHelpers are the functions only seeded-bug branches call.
var seededHelpers = map[seeded.Bug]string{
	seeded.SourceByIP:      "qos.(*objectCompiler).sourceByIP",
	seeded.PartialRejected: "qos.withDiscoverableIPs",
	seeded.BurstUnits:      "qos.kilobitsAsBytes",
}

// TestSeededBugsUnreachable builds this package's test binary without a
// bug tag and with each tag that has a helper: the linker keeps a bug
// helper only in the build whose tag makes its branch reachable, which
// proves the normal build cannot run a seeded bug.
func TestSeededBugsUnreachable(t *testing.T) {
	testenv.Hermetic(t, "builds four test binaries")
	testenv.Binaries(t, "go")
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Fatal(err)
	}
	for _, tag := range []seeded.Bug{seeded.None, seeded.SourceByIP, seeded.PartialRejected, seeded.BurstUnits} {
		syms := buildSymbols(t, gobin, tag)
		for bug, fn := range seededHelpers {
			if got, want := syms[fn], bug == tag; got != want {
				t.Errorf("tag %q: symbol %s present=%v, want %v", tag.Tag(), fn, got, want)
			}
		}
	}
}

// buildSymbols compiles the qos test binary with bug's tag and returns
// the names of its functions with the package path trimmed.
func buildSymbols(t *testing.T, gobin string, bug seeded.Bug) map[string]bool {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "qos.test")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, gobin, "test", "-c", "-tags="+bug.Tag(), "-o", bin, ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go test -c -tags=%q: %v\n%s", bug.Tag(), err, out)
	}
	f, err := elf.Open(bin)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	all, err := f.Symbols()
	if err != nil {
		t.Fatalf("symbols of %s: %v", bin, err)
	}
	syms := map[string]bool{}
	for _, s := range all {
		syms[strings.TrimPrefix(s.Name, "github.com/nqos/nqos/internal/")] = true
	}
	return syms
}
