package seeded

import (
	"github.com/nqos/nqos/internal/testenv"

	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"
)

// goTool returns the go command or skips: these tests build this package
// with other tags, which needs the toolchain.
func goTool(t *testing.T) string {
	t.Helper()
	testenv.Binaries(t, "go")
	p, err := exec.LookPath("go")
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// goCmd runs go with args in this package's directory and returns the
// combined output.
func goCmd(t *testing.T, args ...string) (string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, goTool(t), args...).CombinedOutput()
	return strings.TrimSpace(string(out)), err
}

func TestAll(t *testing.T) {
	all := All()
	want := []Bug{BurstUnits, DSCPOffByOne, ExceptDropped, NoLateLSPRetry, PartialRejected, PriorityX20, SourceByIP, TeardownReversed}
	if len(all) != len(want) {
		t.Fatalf("All() = %v, want %v", all, want)
	}
	for i := range want {
		if all[i] != want[i] {
			t.Fatalf("All() = %v, want %v", all, want)
		}
	}
	if !sort.SliceIsSorted(all, func(i, j int) bool { return all[i] < all[j] }) {
		t.Errorf("All() not sorted: %v", all)
	}
	for _, b := range all {
		if b.Tag() != "nqos_bug_"+string(b) || b.Description() == "" {
			t.Errorf("%s: tag %q description %q", b, b.Tag(), b.Description())
		}
	}
	if None.Tag() != "" || None.Description() != "" {
		t.Errorf("None: tag %q description %q", None.Tag(), None.Description())
	}
}

// TestOneFilePerTagSet: with no tag only none.go defines Active, with a
// bug's tag only bug_<id>.go does.
func TestOneFilePerTagSet(t *testing.T) {
	for _, b := range append([]Bug{None}, All()...) {
		want := "bug_" + string(b) + ".go seeded.go"
		if b == None {
			want = "none.go seeded.go"
		}
		got, err := goCmd(t, "list", "-tags="+b.Tag(), "-f", "{{join .GoFiles \" \"}}", ".")
		if err != nil || got != want {
			t.Errorf("tag %q: files %q (err %v), want %q", b.Tag(), got, err, want)
		}
	}
}

// TestActivePerTag builds the listbugs command with each tag (and with
// none) and checks the compiled-in Active. It builds separate binaries,
// so it holds whatever tag this test binary was built with.
func TestActivePerTag(t *testing.T) {
	dir := t.TempDir()
	for _, b := range append([]Bug{None}, All()...) {
		bin := filepath.Join(dir, "listbugs-"+string(b))
		if out, err := goCmd(t, "build", "-tags="+b.Tag(), "-o", bin, "./cmd/listbugs"); err != nil {
			t.Fatalf("build with tag %q: %v\n%s", b.Tag(), err, out)
		}
		out, err := exec.Command(bin, "-active").Output()
		if got := strings.TrimSpace(string(out)); err != nil || got != string(b) {
			t.Errorf("tag %q: Active %q (err %v), want %q", b.Tag(), got, err, b)
		}
	}
}

// TestTwoTagsDoNotBuild: one bug at a time; two tags redeclare Active.
func TestTwoTagsDoNotBuild(t *testing.T) {
	out, err := goCmd(t, "vet", "-tags="+SourceByIP.Tag()+","+BurstUnits.Tag(), ".")
	if err == nil || !strings.Contains(out, "Active redeclared") {
		t.Errorf("two bug tags: err %v, output %q; want an Active redeclared error", err, out)
	}
}

// TestNoneConstraintListsEveryBug: none.go's build line negates exactly
// the tags of All(), so adding a bug without updating it cannot compile
// two Actives silently or leave a tag with none.
func TestNoneConstraintListsEveryBug(t *testing.T) {
	src, err := os.ReadFile("none.go")
	if err != nil {
		t.Fatal(err)
	}
	line := strings.SplitN(string(src), "\n", 2)[0]
	var got []string
	for _, m := range regexp.MustCompile(`!(nqos_bug_\w+)`).FindAllStringSubmatch(line, -1) {
		got = append(got, m[1])
	}
	var want []string
	for _, b := range All() {
		want = append(want, b.Tag())
	}
	sort.Strings(got)
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("none.go negates %v, want %v", got, want)
	}
}
