package reports

import (
	"bytes"
	"context"
	"fmt"
	"github.com/nqos/nqos/internal/testenv"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

const chromiumPath = "/usr/bin/chromium"

// chromium runs headless Chromium on a local file with a fresh profile and
// returns its stdout and stderr (console messages are logged to stderr).
func chromium(ctx context.Context, t *testing.T, page string, args ...string) (string, string) {
	t.Helper()
	base := []string{"--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--user-data-dir=" + t.TempDir(), "--enable-logging=stderr", "--v=0"}
	cmd := exec.CommandContext(ctx, chromiumPath, append(append(base, args...), "file://"+page)...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	cmd.WaitDelay = 5 * time.Second
	if err := cmd.Run(); err != nil {
		t.Fatalf("chromium %v: %v\n%s", args, err, errb.String())
	}
	return out.String(), errb.String()
}

// consoleMessages returns the page's console messages from Chromium's log.
// The report has no script, so any console message (an exception, a
// refused resource) is an error.
func consoleMessages(stderr string) []string {
	var out []string
	for _, l := range strings.Split(stderr, "\n") {
		if strings.Contains(l, ":CONSOLE") {
			out = append(out, l)
		}
	}
	return out
}

// waitForFile polls until path exists with a non-zero size.
func waitForFile(ctx context.Context, path string) error {
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		if st, err := os.Stat(path); err == nil && st.Size() > 0 {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%s not written: %w", path, ctx.Err())
		case <-tick.C:
		}
	}
}

func needChromium(t *testing.T) {
	t.Helper()
	testenv.Files(t, chromiumPath)
}

// TestReportInHeadlessChromium renders the recorded run, loads it in
// headless Chromium and checks: no console message, both kinds of chart in
// the rendered DOM, and a screenshot saved (kept under testdata/out when
// NQOS_KEEP_SCREENSHOT is set).
func TestReportInHeadlessChromium(t *testing.T) {
	needChromium(t)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	dir := t.TempDir()
	page, err := Write(dir, fixture(t))
	if err != nil {
		t.Fatal(err)
	}
	dom, stderr := chromium(ctx, t, page, "--dump-dom")
	if msgs := consoleMessages(stderr); len(msgs) > 0 {
		t.Errorf("console messages:\n%s", strings.Join(msgs, "\n"))
	}
	for _, want := range []string{`<svg class="chart dscp"`, `<svg class="chart rate"`, "<polyline", `class="bound"`} {
		if !strings.Contains(dom, want) {
			t.Errorf("rendered DOM lacks %s", want)
		}
	}
	shot := filepath.Join(dir, "report.png")
	if keep := os.Getenv("NQOS_KEEP_SCREENSHOT"); keep != "" {
		shot = keep
	}
	_, _ = chromium(ctx, t, page, "--screenshot="+shot, "--window-size=1280,2400", "--hide-scrollbars")
	if err := waitForFile(ctx, shot); err != nil {
		t.Fatal(err)
	}
	png, err := os.ReadFile(shot)
	if err != nil || !bytes.HasPrefix(png, []byte("\x89PNG")) {
		t.Fatalf("screenshot %s is not a PNG: %v", shot, err)
	}
}

// TestConsoleErrorDetection proves the console check can fail: a page
// that throws is caught.
func TestConsoleErrorDetection(t *testing.T) {
	needChromium(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	page := filepath.Join(t.TempDir(), "broken.html")
	if err := os.WriteFile(page, []byte(`<!DOCTYPE html><html><body><script>throw new Error("nqos-broken")</script></body></html>`), 0o644); err != nil {
		t.Fatal(err)
	}
	_, stderr := chromium(ctx, t, page, "--dump-dom")
	msgs := consoleMessages(stderr)
	if len(msgs) == 0 || !strings.Contains(strings.Join(msgs, "\n"), "nqos-broken") {
		t.Errorf("uncaught exception not detected; stderr:\n%s", stderr)
	}
}
